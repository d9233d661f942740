import UploaderSupport

/// File-system questions the loader asks: resolve paths, read small files, compare filesystems.
/// Never creates or changes anything (the daemon creates spool directories, not the parser).
enum ConfigFiles {
    /// A readable regular file's bytes and permission bits.
    struct Contents {
        var bytes: [UInt8]
        var mode: UInt32
    }

    /// `value` made absolute against `directory`, with `.`, empty components and trailing `/` removed.
    static func resolve(_ value: String, relativeTo directory: String) -> String {
        let joined = value.hasPrefix("/") ? value : directory + "/" + value
        let parts = joined.split(separator: "/", omittingEmptySubsequences: true).filter { $0 != "." }
        return "/" + parts.joined(separator: "/")
    }

    /// Where a secret file key's `value` points: a relative path names a systemd credential in
    /// `credentialsDirectory` when one of that name is there, else a file beside the config.
    static func secretPath(_ value: String, relativeTo directory: String, credentialsDirectory: String?) -> String {
        if !value.hasPrefix("/"), !value.split(separator: "/").contains(".."), let credentials = credentialsDirectory,
           credentials.hasPrefix("/") {
            let candidate = resolve(value, relativeTo: credentials)
            if !candidate.utf8.contains(0), (try? FileSystem.statusFollowingLinks(path: candidate)) != nil { return candidate }
        }
        return resolve(value, relativeTo: directory)
    }

    /// The absolute directory holding the config file `path` (relative to the working directory).
    static func directory(of path: String) -> String {
        var absolute = path
        if !path.hasPrefix("/") {
            absolute = (FileSystem.currentDirectory() ?? "/") + "/" + path
        }
        let resolved = resolve(absolute, relativeTo: "/")
        guard let slash = resolved.lastIndex(of: "/"), slash != resolved.startIndex else { return "/" }
        return String(resolved[..<slash])
    }

    /// Reads a regular file of at most `limit` bytes; the error is a reason fit for a message.
    /// Opens non-blocking and refuses FIFOs and devices, so a bad path can never hang the load.
    static func read(_ path: String, limit: Int) -> Result<Contents, ReadFailure> {
        guard !path.utf8.contains(0) else { return .failure(ReadFailure("invalid path")) }
        do {
            return read(try FileDescriptor.open(path, .readOnly, options: [.nonBlocking, .noControllingTerminal]), path: path, limit: limit)
        } catch {
            return .failure(ReadFailure((error as? SystemError)?.reason ?? "\(error)"))
        }
    }

    /// The rest of `read`, on the file opened.
    private static func read(_ fd: borrowing FileDescriptor, path: String, limit: Int) -> Result<Contents, ReadFailure> {
        let info: FileSystem.Status
        do {
            info = try FileSystem.status(fd: fd.rawValue, path: path)
        } catch {
            return .failure(ReadFailure((error as? SystemError)?.reason ?? "\(error)"))
        }
        if info.kind == .directory { return .failure(ReadFailure("is a directory")) }
        guard info.kind == .regular else { return .failure(ReadFailure("not a regular file")) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65_536)
        while bytes.count <= limit {
            let count: Int
            do {
                count = try chunk.withUnsafeMutableBytes { try fd.read(into: $0, path: path) }
            } catch {
                return .failure(ReadFailure((error as? SystemError)?.reason ?? "\(error)"))
            }
            if count == 0 { break }
            bytes += chunk[0..<count]
        }
        guard bytes.count <= limit else { return .failure(ReadFailure("larger than \(ConfigValue.formatSize(Int64(limit)))")) }
        return .success(Contents(bytes: bytes, mode: info.permissions))
    }

    /// Why a file can't be read.
    struct ReadFailure: Error {
        var reason: String
        init(_ reason: String) { self.reason = reason }
    }

    /// nil if `path` is accessible for `permission`, else the OS reason.
    static func accessProblem(_ path: String, _ permission: FileSystem.Permission) -> String? {
        guard !path.utf8.contains(0) else { return "invalid path" }
        return FileSystem.accessRefusal(path: path, permission)?.description
    }

    /// The device of `path`, or of its nearest existing ancestor: where a directory created
    /// there later would live. Nil only if not even `/` can be examined.
    static func filesystem(of path: String) -> UInt64? {
        var candidate = path
        while true {
            if !candidate.utf8.contains(0), let info = try? FileSystem.statusFollowingLinks(path: candidate) { return info.device }
            guard candidate != "/", let slash = candidate.lastIndex(of: "/") else { return nil }
            candidate = slash == candidate.startIndex ? "/" : String(candidate[..<slash])
        }
    }
}
