import Foundation
import UploaderSupport

/// The `s3_*` keys and their rules, shared by the builder, `ConfigKeys` and check-config.
enum S3Settings {
    static let keys = [
        "s3_endpoint", "s3_region", "s3_path_style", "access_key_id", "secret_access_key", "secret_access_key_file",
        "session_token", "session_token_file", "storage_class", "multipart_threshold", "part_size", "part_concurrency",
    ]

    /// Keys of the HTTP destination that mean nothing for `s3://`.
    static let httpOnlyKeys = ["token", "token_file", "username", "password", "password_file"]

    /// Keys check-config prints for every profile: accepted for `s3://` only with the value S3 uses.
    static let fixedValues = ["method": "PUT", "body": "raw", "auth": "none", "protocol": "http"]

    /// Headers the signer sets; `header.*` may not.
    static let reservedHeaders: Set<String> = [
        "authorization", "x-amz-date", "x-amz-content-sha256", "x-amz-security-token", "x-amz-checksum-sha256",
        "x-amz-checksum-algorithm", "x-amz-storage-class", "content-type",
    ]

    static func isS3URL(_ text: String) -> Bool { text.lowercased().hasPrefix("s3://") }

    static let defaultRegion = "us-east-1"
}

extension ProfileBuilder {
    /// With an `http(s)://` url, every `s3_*`-family key is a mistake: report each.
    mutating func rejectS3Keys() -> S3Target? {
        for key in S3Settings.keys where reader.entry(key) != nil {
            reader.diagnostics.error(reader.line(key), "\(key) is set but url is not s3://; it is only used with S3 destinations")
        }
        return nil
    }

    /// Parses `url = s3://BUCKET/KEY-TEMPLATE` and the `s3_*` keys; nil (after reporting) when invalid.
    mutating func s3Target() -> S3Target? {
        var ok = true
        for key in S3Settings.httpOnlyKeys where reader.entry(key) != nil {
            reader.diagnostics.error(reader.line(key), "\(key) is not used with s3:// urls (requests are S3 PUTs signed with access_key_id)")
            ok = false
        }
        for (key, value) in S3Settings.fixedValues.sorted(by: { $0.key < $1.key }) {
            if let text = reader.text(key), text.lowercased() != value.lowercased() {
                reader.diagnostics.error(reader.line(key), "\(key) must be \(value) (or left out) with s3:// urls")
                ok = false
            }
        }
        for entry in reader.section.entries where entry.key.hasPrefix("form.") {
            reader.diagnostics.error(entry.line, "\(entry.key) is not used with s3:// urls")
            ok = false
        }
        for entry in reader.section.entries where entry.key.hasPrefix("header.")
            && S3Settings.reservedHeaders.contains(entry.key.dropFirst(7).lowercased()) {
            reader.diagnostics.error(entry.line, "\(entry.key) cannot be set for s3:// urls: uploader sets \(entry.key.dropFirst(7)) itself")
            ok = false
        }
        let location = s3Location()

        let region = reader.text("s3_region") ?? S3Settings.defaultRegion
        if region.isEmpty || !region.unicodeScalars.allSatisfy({ ("a"..."z").contains($0) || ("0"..."9").contains($0) || $0 == "-" }) {
            reader.diagnostics.error(reader.line("s3_region"), "invalid s3_region \(quotedForMessage(region)) (use e.g. us-east-1)")
            ok = false
        }
        var endpoint = S3Target.awsEndpoint(region: region)
        let endpointGiven = reader.text("s3_endpoint").map { !$0.isEmpty } ?? false
        if endpointGiven, let text = reader.text("s3_endpoint") {
            if let parsed = S3Endpoint(parsing: text) {
                endpoint = parsed
            } else {
                reader.diagnostics.error(reader.line("s3_endpoint"), "invalid s3_endpoint (use http(s)://host[:port], without a path)")
                ok = false
            }
        }
        // A custom endpoint (MinIO, Ceph, Garage) usually serves path-style; AWS wants virtual-hosted.
        let pathStyle = reader.boolean("s3_path_style", default: endpointGiven)

        if reader.entry("access_key_id") == nil {
            reader.diagnostics.error(reader.section.line, "missing required key \"access_key_id\" in \(reader.section.title) (s3:// url)")
            ok = false
        }
        let accessKeyID = reader.text("access_key_id")
        if let accessKeyID, accessKeyID.isEmpty || accessKeyID.unicodeScalars.contains(where: { $0.value <= 0x20 || $0 == "/" || $0.value >= 0x7F }) {
            reader.diagnostics.error(reader.line("access_key_id"), "invalid access_key_id (letters and digits, no spaces or /)")
            ok = false
        }
        if reader.entry("secret_access_key") == nil, reader.entry("secret_access_key_file") == nil {
            reader.diagnostics.error(reader.section.line, "s3:// url needs secret_access_key or secret_access_key_file in \(reader.section.title)")
            ok = false
        }
        let secretKey = secret("secret_access_key", file: "secret_access_key_file")
        let hasToken = reader.entry("session_token") != nil || reader.entry("session_token_file") != nil
        let token = hasToken ? secret("session_token", file: "session_token_file") : nil
        if hasToken, token == nil { ok = false }

        var storageClass: String?
        if let text = reader.text("storage_class"), !text.isEmpty {
            if text.unicodeScalars.allSatisfy({ ("A"..."Z").contains($0) || ("0"..."9").contains($0) || $0 == "_" }) {
                storageClass = text
            } else {
                reader.diagnostics.error(reader.line("storage_class"), "invalid storage_class \(quotedForMessage(text)) (use e.g. STANDARD, STANDARD_IA, GLACIER_IR)")
                ok = false
            }
        }
        let threshold = reader.size("multipart_threshold", default: 64 << 20, in: S3Target.minimumPartSize...S3Target.maximumPartSize)
        let partSize = reader.size("part_size", default: 16 << 20, in: S3Target.minimumPartSize...S3Target.maximumPartSize)
        let concurrency = reader.integer("part_concurrency", default: 4, in: 1...64)

        guard ok, let location, let accessKeyID, let secretKey else { return nil }
        var target = S3Target(bucket: location.bucket, key: location.key, endpoint: endpoint, endpointGiven: endpointGiven,
                              region: region, pathStyle: pathStyle, accessKeyID: accessKeyID, secretAccessKey: secretKey,
                              sessionToken: token)
        target.storageClass = storageClass
        target.multipartThreshold = threshold
        target.partSize = partSize
        target.partConcurrency = concurrency
        return target
    }

    /// `s3://BUCKET/KEY-TEMPLATE`: a literal bucket name, a non-empty key template.
    private mutating func s3Location() -> (bucket: String, key: Template)? {
        guard let text = reader.text("url") else { return nil }
        let line = reader.line("url")
        let rest = text.dropFirst(5)
        guard let slash = rest.firstIndex(of: "/") else {
            reader.diagnostics.error(line, "s3 url needs a key after the bucket: s3://BUCKET/KEY-TEMPLATE, e.g. s3://ingest/{hostname}/{path}")
            return nil
        }
        let bucket = String(rest[..<slash])
        let keyText = String(rest[rest.index(after: slash)...])
        let validBucket = (3...63).contains(bucket.count) && bucket.unicodeScalars.allSatisfy {
            ("a"..."z").contains($0) || ("0"..."9").contains($0) || $0 == "-" || $0 == "."
        } && !bucket.hasPrefix("-") && !bucket.hasPrefix(".") && !bucket.hasSuffix("-") && !bucket.hasSuffix(".")
        if !validBucket {
            let hint = bucket.contains("{") ? "placeholders are only allowed in the key" : "3 to 63 lowercase letters, digits, dots and hyphens"
            reader.diagnostics.error(line, "invalid bucket name \(quotedForMessage(bucket, limit: 64)) in url (\(hint))")
            return nil
        }
        if keyText.isEmpty {
            reader.diagnostics.error(line, "s3 url needs a key after the bucket: s3://BUCKET/KEY-TEMPLATE, e.g. s3://\(bucket)/{path}")
            return nil
        }
        if keyText.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) {
            reader.diagnostics.error(line, "s3 url's key must not contain control characters")
            return nil
        }
        // HTTP clients squash `.` and `..` path segments, which would change the key.
        if keyText.split(separator: "/", omittingEmptySubsequences: false).contains(where: { $0 == "." || $0 == ".." }) {
            reader.diagnostics.error(line, "s3 url's key must not contain \".\" or \"..\" segments")
            return nil
        }
        guard let key = parseTemplate(keyText, key: "url", redact: false) else { return nil }
        if key.parts.allSatisfy({ if case .literal = $0 { return true } else { return false } }) {
            reader.diagnostics.warning(line, "s3 url's key has no placeholder: every file is uploaded to the same key (add e.g. {path})")
        }
        return (bucket, key)
    }
}

extension S3Target {
    /// The `s3_*` keys as check-config prints them, in order; a nil value is printed as `<redacted>`.
    var effectiveEntries: [(String, String?)] {
        var entries: [(String, String?)] = [
            ("s3_endpoint", endpointGiven ? endpoint.description : ""),
            ("s3_region", region),
            ("s3_path_style", ConfigValue.formatBoolean(pathStyle)),
            ("access_key_id", accessKeyID),
        ]
        entries.append(secretAccessKey.file.map { ("secret_access_key_file", $0) } ?? ("secret_access_key", nil))
        if let sessionToken {
            entries.append(sessionToken.file.map { ("session_token_file", $0) } ?? ("session_token", nil))
        }
        entries += [
            ("storage_class", storageClass ?? ""),
            ("multipart_threshold", ConfigValue.formatSize(multipartThreshold)),
            ("part_size", ConfigValue.formatSize(partSize)),
            ("part_concurrency", String(partConcurrency)),
        ]
        return entries
    }
}

extension Destination {
    /// Credentials the destination itself holds (S3 keys), for scrubbing.
    package var secrets: [String] {
        switch self {
        case .http: return []
        case .s3(let target): return target.secrets
        case .remoteFile(let target): return target.secrets
        }
    }
}
