import Foundation
import UploaderSupport
import UploaderConfig
import UploaderTransfer

/// The tus 1.0 server a schedule with `protocol = tus` uploads to (core, creation, termination,
/// and checksum when the schedule drew it): OPTIONS, creation POST, HEAD, PATCH and DELETE,
/// read from the requests as production sends them. Uploads are told apart by the creation's
/// `Idempotency-Key` (the manifest id) and then by their upload URL. A PATCH cut short keeps
/// what arrived, as tusd does.
///
/// The highest offset the server has told the client of each upload is kept, for the
/// invariant that a PATCH never starts below it.
final class SimTusServer: SimProtocolServer {
    // Used by the thread holding the baton only.

    /// One upload.
    struct Upload {
        var id: String
        var length: Int64
        var data: [UInt8] = []
        /// A chunk's body was not the one its `Content-Digest` declared.
        var torn = false
        /// Terminated (DELETE): the server no longer has it.
        var gone = false
        /// The highest offset an answer that reached the client reported.
        var told: Int64 = 0
    }

    private unowned let log: SimServer
    /// The server offers the checksum extension with sha256.
    let checksum: Bool
    private var uploads: [Upload] = []
    private(set) var violations: [String] = []

    static let creationURL = SimDestination.origin + "/files/"

    init(log: SimServer, checksum: Bool) {
        self.log = log
        self.checksum = checksum
    }

    private func header(_ request: UploadRequest, _ name: String) -> String? {
        request.headers.first { $0.name.lowercased() == name.lowercased() }?.value
    }

    /// The upload an upload URL names (its index), nil for the creation URL or a URL the server never gave.
    private func index(_ request: UploadRequest) -> Int? {
        guard request.url.hasPrefix(Self.creationURL), let n = Int(request.url.dropFirst(Self.creationURL.count)),
              uploads.indices.contains(n - 1) else { return nil }
        return n - 1
    }

    func identity(of request: UploadRequest) -> String {
        if request.method == .post { return header(request, "Idempotency-Key") ?? "" }
        return index(request).map { uploads[$0].id } ?? ""
    }

    func attempt(of request: UploadRequest, job: Int?) -> Int { job ?? -1 }

    func apply(_ request: UploadRequest, body: [UInt8], partial: Bool, attempt: Int) -> UploadResponse {
        if partial && request.method != .patch { return UploadResponse(status: 400) }
        switch request.method {
        case .options:
            var headers = ["tus-version": TusRequests.version, "tus-extension": "creation,termination" + (checksum ? ",checksum" : "")]
            if checksum { headers["tus-checksum-algorithm"] = "sha1,sha256" }
            return UploadResponse(status: 204, headers: headers)
        case .post:
            guard let length = header(request, "Upload-Length").flatMap({ Int64($0) }), length >= 0 else { return UploadResponse(status: 400) }
            uploads.append(Upload(id: identity(of: request), length: length))
            // An empty upload is finished as it is created.
            if length == 0 { finished(uploads.count - 1) }
            return UploadResponse(status: 201, location: Self.creationURL + String(uploads.count))
        case .head:
            guard let i = index(request), !uploads[i].gone else { return UploadResponse(status: 404) }
            return UploadResponse(status: 200, headers: ["upload-offset": String(uploads[i].data.count), "upload-length": String(uploads[i].length)])
        case .patch:
            guard let i = index(request), !uploads[i].gone else { return UploadResponse(status: 404) }
            guard let offset = header(request, "Upload-Offset").flatMap({ Int64($0) }) else { return UploadResponse(status: 400) }
            if offset < uploads[i].told {
                violations.append("PATCH of \(request.url) (\(uploads[i].id)) at offset \(offset), below the \(uploads[i].told) the server had reported")
            }
            guard offset == Int64(uploads[i].data.count) else { return UploadResponse(status: 409) }
            guard offset + Int64(body.count) <= uploads[i].length else { return UploadResponse(status: 400) }
            let hash = SHA256.hash(body)
            if !partial, let sum = header(request, "Upload-Checksum"), sum != "sha256 " + Data(hash).base64EncodedString() {
                return UploadResponse(status: 460)
            }
            if !partial, let digest = header(request, "Content-Digest"), digest != BodyDigest.header(sha256: hash) { uploads[i].torn = true }
            uploads[i].data += body
            if Int64(uploads[i].data.count) == uploads[i].length { finished(i) }
            return UploadResponse(status: 204, headers: ["upload-offset": String(uploads[i].data.count)])
        case .delete:
            guard let i = index(request), !uploads[i].gone else { return UploadResponse(status: 404) }
            uploads[i].gone = true
            return UploadResponse(status: 204)
        default:
            preconditionFailure("a tus request the server does not know: \(request.method) \(request.url)")
        }
    }

    /// The upload holds all its bytes: the object the client meant is kept.
    private func finished(_ i: Int) {
        log.record(SimServer.Request(id: uploads[i].id, bytes: uploads[i].data, kept: true, status: 204, torn: uploads[i].torn, opens: false))
    }

    func delivered(_ request: UploadRequest, _ answer: UploadResponse) {
        guard let i = index(request), (200...299).contains(answer.status),
              let offset = answer.headers["upload-offset"].flatMap({ Int64($0) }) else { return }
        uploads[i].told = max(uploads[i].told, offset)
    }
}
