import Foundation

/// One request as `fault_server.py` recorded it (`GET /__requests`), with typed accessors
/// for what the wire tests assert on: headers, multipart parts, the JSON object.
struct RecordedRequest {
    let raw: [String: Any]

    var method: String { raw["method"] as? String ?? "" }
    /// The request target exactly as sent (still percent-encoded).
    var path: String { raw["path"] as? String ?? "" }
    var bodyLength: Int { raw["body_length"] as? Int ?? -1 }
    var bodySHA256: String { raw["body_sha256"] as? String ?? "" }
    /// Answered 401/403 by the server's credentials gate (`FaultServer.refuseCredentials`).
    var refusedCredentials: Bool { raw["refused_credentials"] as? Bool ?? false }

    /// Every header line as (name, value), in the order received.
    var headers: [(name: String, value: String)] {
        (raw["headers"] as? [[String]] ?? []).compactMap { $0.count == 2 ? ($0[0], $0[1]) : nil }
    }

    /// The values of every header named `name` (case-insensitive).
    func headerValues(_ name: String) -> [String] {
        headers.filter { $0.name.lowercased() == name.lowercased() }.map(\.value)
    }

    func header(_ name: String) -> String? { headerValues(name).first }

    /// The parts as Python's `email` parser saw them; nil when the body was not multipart.
    var parts: [MultipartPart]? {
        (raw["multipart"] as? [[String: Any]])?.map(MultipartPart.init)
    }

    var multipartError: String? { raw["multipart_error"] as? String }

    /// The JSON object as Python's `json` module saw it (content_base64 decoded to length/sha256/text).
    var json: [String: Any]? { raw["json"] as? [String: Any] }

    var jsonError: String? { raw["json_error"] as? String }

    /// The raw body (recorded up to 1 MiB).
    var body: Data? { (raw["body_base64"] as? String).flatMap { Data(base64Encoded: $0) } }
}

/// One part of a multipart body, as parsed by Python's `email` package.
struct MultipartPart {
    let name: String?
    let filename: String?
    let contentType: String?
    let length: Int
    let sha256: String
    /// The payload as text (only for parts up to 4 KiB).
    let value: String?

    init(_ raw: [String: Any]) {
        name = raw["name"] as? String
        filename = raw["filename"] as? String
        contentType = raw["content_type"] as? String
        length = raw["length"] as? Int ?? -1
        sha256 = raw["sha256"] as? String ?? ""
        value = raw["value"] as? String
    }
}

extension FaultServer {
    /// The recorded requests, typed (control requests are never recorded).
    func recorded() throws -> [RecordedRequest] {
        try requests().map(RecordedRequest.init)
    }
}

/// Every regular file under `root` (hidden ones included) whose bytes contain `needle`,
/// as paths relative to `root`: to prove a secret was written nowhere.
func filesContaining(_ needle: String, under root: String) -> [String] {
    let wanted = Data(needle.utf8)
    guard let walker = FileManager.default.enumerator(atPath: root) else { return [] }
    var hits: [String] = []
    while let relative = walker.nextObject() as? String {
        let full = root + "/" + relative
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: full, isDirectory: &isDirectory), !isDirectory.boolValue,
              let data = FileManager.default.contents(atPath: full) else { continue }
        if data.range(of: wanted) != nil { hits.append(relative) }
    }
    return hits.sorted()
}

extension Data {
    /// Bytes from a hex string (two digits per byte); nil if malformed.
    init?(hex: String) {
        let digits = Array(hex.utf8)
        guard digits.count % 2 == 0 else { return nil }
        var bytes: [UInt8] = []
        for i in stride(from: 0, to: digits.count, by: 2) {
            guard let byte = UInt8(String(decoding: digits[i..<i + 2], as: UTF8.self), radix: 16) else { return nil }
            bytes.append(byte)
        }
        self.init(bytes)
    }
}
