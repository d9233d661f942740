import UploaderSupport

/// The head of an HTTP response as it arrives, one header line at a time: the status line
/// (each new one, after a `100 Continue` or an interim answer, starts afresh) and the headers
/// a request acts on (`ETag`, `Location`, `Retry-After`, those it asked to keep). One parser
/// for libcurl's header callback and for the simulator's servers, which send their answers as
/// these lines so that the parsing runs in every schedule.
package struct ResponseHead: Sendable {
    package private(set) var status = 0
    package private(set) var statusText = ""
    package private(set) var etag: String?
    package private(set) var location: String?
    package private(set) var retryAfter: String?
    /// Headers the request asked to keep (`UploadRequest.keepHeaders`), by lowercased name.
    package private(set) var kept: [String: String] = [:]
    /// `keepHeaders` as the lowercased `name:` prefixes raw lines are compared with.
    private let keptPrefixes: [[UInt8]]

    package init(keeping names: [String]) {
        keptPrefixes = names.map { Array(($0.lowercased() + ":").utf8) }
    }

    /// Takes one raw header line (with or without its CRLF). True when it was a status line:
    /// what an earlier response of the exchange set is gone, its body too.
    @discardableResult
    package mutating func take(_ line: UnsafeRawBufferPointer) -> Bool {
        guard Self.isInteresting(line) || isKept(line) else { return false }
        return take(String(decoding: line, as: UTF8.self))
    }

    /// `take` of a line as text.
    @discardableResult
    package mutating func take(_ line: String) -> Bool {
        let trimmed = Self.trimmingHTTPWhitespace(Substring(line))
        if trimmed.hasPrefix("HTTP/") {
            let parts = trimmed.split(separator: " ", maxSplits: 2, omittingEmptySubsequences: true)
            status = parts.count > 1 ? Int(parts[1]) ?? 0 : 0
            statusText = parts.count > 2 ? String(parts[2]) : ""
            etag = nil; location = nil; retryAfter = nil; kept = [:]
            return true
        }
        guard let colon = trimmed.firstIndex(of: ":") else { return false }
        let name = trimmed[..<colon].lowercased()
        let value = String(Self.trimmingHTTPWhitespace(trimmed[trimmed.index(after: colon)...]))
        switch name {
        case "etag": etag = value
        case "location": location = value
        case "retry-after": if !PlantedBug.retryAfterDropped.isActive { retryAfter = value }
        default: if keptPrefixes.contains(Array((name + ":").utf8)) { kept[name] = value }
        }
        return false
    }

    /// The response this head begins (`status` as libcurl reports it, which the last status
    /// line also says).
    package func response(status: Int, body: String, bytesSent: Int64, effectiveURL: String) -> UploadResponse {
        UploadResponse(status: status, statusText: statusText, etag: etag, location: location, retryAfter: retryAfter,
                       headers: kept, body: body, bytesSent: bytesSent, effectiveURL: effectiveURL)
    }

    /// `text` without the spaces, tabs and line ends around it (RFC 9110's OWS, and the CRLF
    /// libcurl leaves on each line); Foundation's `trimmingCharacters` bridged to NSString on
    /// every response.
    static func trimmingHTTPWhitespace(_ text: Substring) -> Substring {
        func isSpace(_ c: Character) -> Bool { c == " " || c == "\t" || c == "\r" || c == "\n" || c == "\r\n" }
        guard let first = text.firstIndex(where: { !isSpace($0) }), let last = text.lastIndex(where: { !isSpace($0) }) else { return "" }
        return text[first...last]
    }

    /// Header lines `take` acts on whatever the request keeps: status lines and the three
    /// headers every response may carry. Checked on the raw bytes so the other lines (Server,
    /// Date, Content-Length…) cost no String work; that work was ~3 % of the CPU of a 4 KiB upload.
    static func isInteresting(_ line: UnsafeRawBufferPointer) -> Bool {
        func hasPrefix(_ prefix: StaticString) -> Bool {
            startsCaseInsensitively(line, with: UnsafeBufferPointer(start: prefix.utf8Start, count: prefix.utf8CodeUnitCount))
        }
        return hasPrefix("http/") || hasPrefix("etag:") || hasPrefix("location:") || hasPrefix("retry-after:")
    }

    /// Whether `line` is one of the headers the request asked to keep.
    private func isKept(_ line: UnsafeRawBufferPointer) -> Bool {
        keptPrefixes.contains { prefix in prefix.withUnsafeBufferPointer { Self.startsCaseInsensitively(line, with: $0) } }
    }

    /// `line` begins with `prefix` (lowercase ASCII), letters compared without case.
    private static func startsCaseInsensitively(_ line: UnsafeRawBufferPointer, with prefix: UnsafeBufferPointer<UInt8>) -> Bool {
        guard line.count >= prefix.count else { return false }
        for i in 0..<prefix.count {
            var b = line[i]
            if b >= UInt8(ascii: "A") && b <= UInt8(ascii: "Z") { b += 32 }
            if b != prefix[i] { return false }
        }
        return true
    }
}
