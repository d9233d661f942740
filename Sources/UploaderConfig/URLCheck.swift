import UploaderSupport

/// Checks a destination URL's fixed part: scheme, host and port, before placeholders are parsed.
enum URLCheck {
    /// nil if `text` is an acceptable `http(s)://host[:port]/...` template, else the reason.
    /// Messages never echo the URL: it might carry a password the user pasted in.
    static func problem(_ text: String) -> String? {
        let lower = text.lowercased()
        let rest: Substring
        if lower.hasPrefix("https://") { rest = text.dropFirst(8) }
        else if lower.hasPrefix("http://") { rest = text.dropFirst(7) }
        else { return "url must start with http://, https://, s3://, sftp://, ftps:// or ftp://" }
        if text.unicodeScalars.contains(where: { $0 == " " || $0 == "\t" }) {
            return "url must not contain spaces (write them as %20)"
        }
        let authority = rest.prefix { $0 != "/" && $0 != "?" && $0 != "#" }
        if authority.isEmpty { return "url has no host" }
        if authority.contains("@") { return "url must not contain a user name or password; use auth = basic or bearer" }
        if authority.contains("{") || authority.contains("}") { return "url's host and port cannot contain placeholders" }
        var host = authority[...]
        var port: Substring = ""
        if authority.hasPrefix("[") {
            guard let close = authority.firstIndex(of: "]") else { return "url has an unterminated IPv6 address" }
            host = authority[authority.index(after: authority.startIndex)..<close]
            let after = authority[authority.index(after: close)...]
            if !after.isEmpty {
                guard after.hasPrefix(":") else { return "url has an invalid host" }
                port = after.dropFirst()
                if port.isEmpty { return "url has an empty port" }
            }
        } else if let colon = authority.firstIndex(of: ":") {
            host = authority[..<colon]
            port = authority[authority.index(after: colon)...]
            if port.isEmpty { return "url has an empty port" }
        }
        if host.isEmpty { return "url has no host" }
        if !port.isEmpty {
            guard port.utf8.count <= 5, port.allSatisfy({ $0.isASCII && $0.isNumber }), let number = Int(port), (1...65535).contains(number) else {
                return "url has an invalid port (use 1 to 65535)"
            }
        }
        return nil
    }

    /// An HTTP field name (RFC 9110 token).
    static func isToken(_ name: String) -> Bool {
        !name.isEmpty && name.unicodeScalars.allSatisfy { s in
            ("a"..."z").contains(s) || ("A"..."Z").contains(s) || ("0"..."9").contains(s) || "!#$%&'*+-.^_`|~".unicodeScalars.contains(s)
        }
    }
}
