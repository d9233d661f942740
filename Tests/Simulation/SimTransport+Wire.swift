import UploaderTransfer

extension SimTransport {
    /// A simulated server's answer as the client reads it: written as the status line and header
    /// lines a server sends, then read by production's parser (`ResponseHead`) with the headers
    /// the request asked to keep, as libcurl's header callback hands them over. What the parser
    /// drops or misreads, the daemon never hears.
    static func overTheWire(_ answer: UploadResponse, for request: UploadRequest) -> UploadResponse {
        var lines = ["HTTP/1.1 \(answer.status) \(answer.statusText)\r\n"]
        if let etag = answer.etag { lines.append("ETag: \(etag)\r\n") }
        if let location = answer.location { lines.append("Location: \(location)\r\n") }
        if let retryAfter = answer.retryAfter { lines.append("Retry-After: \(retryAfter)\r\n") }
        for (name, value) in answer.headers.sorted(by: { $0.key < $1.key }) { lines.append("\(name): \(value)\r\n") }
        lines.append("\r\n")
        var head = ResponseHead(keeping: request.keepHeaders)
        for line in lines { Array(line.utf8).withUnsafeBytes { _ = head.take($0) } }
        return head.response(status: answer.status, body: answer.body, bytesSent: answer.bytesSent, effectiveURL: answer.effectiveURL)
    }
}
