import Foundation
import UploaderSupport
import UploaderConfig
import UploaderTransfer

/// The S3-compatible store a schedule with an `s3://` url uploads to: PutObject and the
/// multipart calls (Create, UploadPart, ListParts, Complete, Abort), read from the requests as
/// production sends them (path style, the query it signs; signatures are not checked). Uploads
/// are told apart by the manifest id each object request carries (`SimDestination.s3IDHeader`)
/// and, after Create, by the upload id the store gave.
///
/// What the client has been told about each part is kept, for the invariant that a part is
/// never sent again once the client knew the store held it (its 2xx, or a ListParts naming it).
final class SimS3Server: SimProtocolServer {
    // Used by the thread holding the baton only.

    /// One multipart upload.
    struct Upload {
        var id: String
        var parts: [Int: Part] = [:]
        /// Completed or aborted: the store no longer knows the upload id.
        var gone = false
        /// The job of the last worker request for this upload: the attempt its part threads serve.
        var attempt: Int
    }

    /// One stored part.
    struct Part {
        var bytes: [UInt8]
        var etag: String
        /// The body is not the one its payload hash declared.
        var torn: Bool
        /// The client learnt that the store holds it: its 2xx reached the client, or a ListParts that named it did.
        var known = false
    }

    private unowned let log: SimServer
    private var uploads: [String: Upload] = [:]
    private var created = 0
    private(set) var violations: [String] = []

    init(log: SimServer) { self.log = log }

    /// The parts of a request as the store reads them.
    private struct Parsed {
        var method: HTTPMethod
        var key: String
        var query: [String: String]
        var headers: [String: String]
        var uploadID: String? { query["uploadId"] }
        var partNumber: Int? { query["partNumber"].flatMap { Int($0) } }
    }

    private func parse(_ request: UploadRequest) -> Parsed {
        let url = request.url
        let prefix = SimDestination.origin + "/" + SimDestination.bucket + "/"
        precondition(url.hasPrefix(prefix), "an S3 request outside the simulated bucket: \(url)")
        let rest = url.dropFirst(prefix.count)
        let path = rest.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)
        var query: [String: String] = [:]
        if path.count > 1 {
            for pair in path[1].split(separator: "&") {
                let kv = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
                query[String(kv[0])] = kv.count > 1 ? String(kv[1]).removingPercentEncoding ?? String(kv[1]) : ""
            }
        }
        var headers: [String: String] = [:]
        for header in request.headers { headers[header.name.lowercased()] = header.value }
        return Parsed(method: request.method, key: String(path[0]).removingPercentEncoding ?? String(path[0]), query: query, headers: headers)
    }

    func identity(of request: UploadRequest) -> String {
        let p = parse(request)
        if let uploadID = p.uploadID { return uploads[uploadID]?.id ?? "" }
        return p.headers[SimDestination.s3IDHeader] ?? ""
    }

    func attempt(of request: UploadRequest, job: Int?) -> Int {
        let p = parse(request)
        guard let uploadID = p.uploadID, uploads[uploadID] != nil else { return job ?? -1 }
        if let job { uploads[uploadID]!.attempt = job }
        return uploads[uploadID]!.attempt
    }

    func apply(_ request: UploadRequest, body: [UInt8], partial: Bool, attempt: Int) -> UploadResponse {
        let p = parse(request)
        // A body cut short stores nothing at an S3 store.
        if partial { return UploadResponse(status: 400) }
        switch (p.method, p.uploadID, p.partNumber) {
        case (.put, nil, _):
            // PutObject: the object is the body.
            log.record(SimServer.Request(id: p.headers[SimDestination.s3IDHeader] ?? "", bytes: body, kept: true, status: 200,
                                         torn: Self.torn(body, p.headers), opens: false))
            return UploadResponse(status: 200, etag: Self.etag(body))
        case (.post, nil, _):
            precondition(p.query["uploads"] != nil, "an S3 POST that is neither Create nor Complete: \(request.url)")
            created += 1
            let uploadID = "up-\(created)"
            uploads[uploadID] = Upload(id: p.headers[SimDestination.s3IDHeader] ?? "", attempt: attempt)
            return UploadResponse(status: 200, body: "<InitiateMultipartUploadResult><Bucket>\(SimDestination.bucket)</Bucket>"
                                  + "<Key>\(SimXML.escape(p.key))</Key><UploadId>\(uploadID)</UploadId></InitiateMultipartUploadResult>")
        case (let method, let uploadID?, let number):
            guard var upload = uploads[uploadID], !upload.gone else { return Self.noSuchUpload }
            defer { uploads[uploadID] = upload }
            switch (method, number) {
            case (.put, let number?):
                if upload.parts[number]?.known == true {
                    violations.append("part \(number) of \(uploadID) (\(upload.id)) sent again after the client knew the store held it")
                }
                upload.parts[number] = Part(bytes: body, etag: Self.etag(body), torn: Self.torn(body, p.headers))
                return UploadResponse(status: 200, etag: Self.etag(body))
            case (.get, _):
                var xml = "<ListPartsResult><Bucket>\(SimDestination.bucket)</Bucket><UploadId>\(uploadID)</UploadId><IsTruncated>false</IsTruncated>"
                for (n, part) in upload.parts.sorted(by: { $0.key < $1.key }) {
                    xml += "<Part><PartNumber>\(n)</PartNumber><ETag>\(SimXML.escape(part.etag))</ETag><Size>\(part.bytes.count)</Size></Part>"
                }
                return UploadResponse(status: 200, body: xml + "</ListPartsResult>")
            case (.post, _):
                return complete(&upload, uploadID: uploadID, body: body)
            case (.delete, _):
                upload.gone = true
                upload.parts = [:]
                return UploadResponse(status: 204)
            default:
                preconditionFailure("an S3 request the store does not know: \(method) \(request.url)")
            }
        default:
            preconditionFailure("an S3 request the store does not know: \(p.method) \(request.url)")
        }
    }

    /// CompleteMultipartUpload: the object is the listed parts in order, each as its ETag names it.
    private func complete(_ upload: inout Upload, uploadID: String, body: [UInt8]) -> UploadResponse {
        guard let xml = S3XML(String(decoding: body, as: UTF8.self)) else { return Self.error(400, "MalformedXML") }
        var object: [UInt8] = []
        var torn = false
        var last = 0
        for listed in xml.records("Part") {
            guard let n = listed["PartNumber"].flatMap({ Int($0) }), n > last, let part = upload.parts[n],
                  part.etag == listed["ETag"] else { return Self.error(400, "InvalidPart") }
            last = n
            object += part.bytes
            torn = torn || part.torn
        }
        upload.gone = true
        upload.parts = [:]
        log.record(SimServer.Request(id: upload.id, bytes: object, kept: true, status: 200, torn: torn, opens: false))
        return UploadResponse(status: 200, body: "<CompleteMultipartUploadResult><Bucket>\(SimDestination.bucket)</Bucket>"
                              + "<ETag>\(SimXML.escape(Self.etag(object)))</ETag></CompleteMultipartUploadResult>")
    }

    func delivered(_ request: UploadRequest, _ answer: UploadResponse) {
        let p = parse(request)
        guard (200...299).contains(answer.status), let uploadID = p.uploadID, uploads[uploadID] != nil else { return }
        switch (p.method, p.partNumber) {
        case (.put, let number?):
            uploads[uploadID]!.parts[number]?.known = true
        case (.get, _):
            for part in S3XML(answer.body)?.records("Part") ?? [] {
                if let n = part["PartNumber"].flatMap({ Int($0) }) { uploads[uploadID]!.parts[n]?.known = true }
            }
        default:
            break
        }
    }

    static func etag(_ bytes: [UInt8]) -> String { "\"\(SHA256.hash(bytes).hexString.prefix(32))\"" }

    /// The body differs from the payload hash or checksum the request declared (the file changed under it).
    static func torn(_ body: [UInt8], _ headers: [String: String]) -> Bool {
        let hash = SHA256.hash(body)
        if let declared = headers["x-amz-content-sha256"], declared.count == 64, declared != hash.hexString { return true }
        if let checksum = headers["x-amz-checksum-sha256"], checksum != Data(hash).base64EncodedString() { return true }
        return false
    }

    static let noSuchUpload = error(404, "NoSuchUpload")

    static func error(_ status: Int, _ code: String) -> UploadResponse {
        UploadResponse(status: status, body: "<Error><Code>\(code)</Code><Message>simulated</Message></Error>")
    }
}

/// XML text escaping for the store's answers.
enum SimXML {
    static func escape(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;").replacingOccurrences(of: "\"", with: "&quot;")
    }
}
