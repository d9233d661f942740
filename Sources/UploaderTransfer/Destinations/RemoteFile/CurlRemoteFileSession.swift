import CCurl
import Foundation
import UploaderSupport
import UploaderConfig

/// `RemoteFileSession` over libcurl's SFTP (libssh2) and FTP(S): one easy handle, so the SSH or
/// FTP connection stays open from one operation and one file to the next. Renames and deletes
/// are quote commands sent as requests of their own (CURLOPT_QUOTE with CURLOPT_NOBODY), never
/// CURLOPT_POSTQUOTE. Used by one thread at a time (`RemoteFileDestination` lends it out).
final class CurlRemoteFileSession: RemoteFileSession, @unchecked Sendable {
    /// SFTP throughput: libssh2 keeps this much in flight instead of one 30,000-byte packet.
    static let sftpBufferSize = 2 << 20

    let target: RemoteFileTarget
    private let handle = CurlHandle()
    /// The FTP login directory (PWD), which quote commands' relative paths need: they run before
    /// libcurl's CWD, in whatever directory a reused connection was left in.
    private var ftpEntryPath: String?

    init(target: RemoteFileTarget) { self.target = target }

    // MARK: Operations

    func size(of path: String, _ controls: RemoteFileControls) -> Result<Int64?, RemoteFileFailure> {
        let done = perform(url(path), controls, body: nil) { h in h.set(CURLOPT_NOBODY, 1) }
        if let failure = done.failure {
            // No such file, or (FTP) no such directory to look in: nothing there.
            if failure.kind == .pathRefused { return .success(nil) }
            return .failure(failure)
        }
        let length = handle.offset(CURLINFO_CONTENT_LENGTH_DOWNLOAD_T)
        return .success(length >= 0 ? length : nil)
    }

    func upload(_ source: UploadSource, to path: String, append: Bool, _ controls: RemoteFileControls) -> Result<Int64, RemoteFileFailure> {
        let done = perform(url(path), controls, body: source) { [target] h in
            h.set(CURLOPT_UPLOAD, 1)
            h.set(CURLOPT_INFILESIZE_LARGE, offset: source.size)
            // -1: libcurl asks the server's size and appends after it (a positive offset appends
            // wrongly over SFTP before curl 8.17).
            if append { h.set(CURLOPT_RESUME_FROM_LARGE, offset: -1) }
            h.set(CURLOPT_FTP_CREATE_MISSING_DIRS, Int(CURLFTP_CREATE_DIR_RETRY.rawValue))
            if target.scheme == .sftp { h.set(CURLOPT_UPLOAD_BUFFERSIZE, Self.sftpBufferSize) }
        }
        if let failure = done.failure { return .failure(failure) }
        return .success(done.bytesSent)
    }

    func rename(_ from: String, to: String, _ controls: RemoteFileControls) -> Result<Void, RemoteFileFailure> {
        switch target.scheme {
        case .sftp: quote(["rename \(Self.sftpQuoted(from)) \(Self.sftpQuoted(to))"], in: to, controls)
        case .ftps, .ftp: ftpAbsolute([from, to], controls).flatMap { quote(["RNFR \($0[0])", "RNTO \($0[1])"], in: to, controls) }
        }
    }

    func delete(_ path: String, _ controls: RemoteFileControls) -> Result<Void, RemoteFileFailure> {
        switch target.scheme {
        case .sftp: quote(["rm \(Self.sftpQuoted(path))"], in: path, controls)
        case .ftps, .ftp: ftpAbsolute([path], controls).flatMap { quote(["DELE \($0[0])"], in: path, controls) }
        }
    }

    // MARK: Quote commands

    /// FTP paths made absolute from the login directory (asked first when unknown).
    private func ftpAbsolute(_ paths: [String], _ controls: RemoteFileControls) -> Result<[String], RemoteFileFailure> {
        if ftpEntryPath == nil, case .failure(let failure) = size(of: "", controls) { return .failure(failure) }
        let base = ftpEntryPath ?? "/"
        return .success(paths.map { $0.hasPrefix("/") ? $0 : (base.hasSuffix("/") ? base : base + "/") + $0 })
    }

    /// `commands` as one request of their own on the directory of `path`, no transfer.
    private func quote(_ commands: [String], in path: String, _ controls: RemoteFileControls) -> Result<Void, RemoteFileFailure> {
        var list: UnsafeMutablePointer<curl_slist>?
        defer { curl_slist_free_all(list) }
        for command in commands { list = curl_slist_append(list, command) }
        let directory = path.contains("/") ? String(path[...path.lastIndex(of: "/")!]) : ""
        let done = perform(url(directory), controls, body: nil) { h in
            h.set(CURLOPT_NOBODY, 1)
            h.set(CURLOPT_QUOTE, list: list)
        }
        if let failure = done.failure { return .failure(failure) }
        return .success(())
    }

    /// A path as an SFTP quote command's argument: in double quotes, `\` and `"` escaped.
    static func sftpQuoted(_ path: String) -> String {
        "\"" + path.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") + "\""
    }

    // MARK: URLs

    /// The URL of a server path: each segment percent-encoded; ftp(s) paths relative to the login
    /// directory unless they begin with `/` (then `%2F`, RFC 1738).
    func url(_ path: String) -> String { Self.url(target, path) }

    static func url(_ target: RemoteFileTarget, _ path: String) -> String {
        let encoded = path.split(separator: "/", omittingEmptySubsequences: false)
            .map { $0 == "~" ? "~" : URLTemplate.encodeSegment(Array($0.utf8)) }.joined(separator: "/")
        let origin = "\(target.scheme.rawValue)://\(URLTemplate.encodeSegment(Array(target.user.utf8)))@\(target.host):\(target.port)"
        switch target.scheme {
        case .sftp: return origin + (encoded.hasPrefix("/") ? encoded : "/" + encoded)
        case .ftps, .ftp: return origin + "/" + (encoded.hasPrefix("/") ? "%2F" + encoded.dropFirst() : encoded)
        }
    }

    // MARK: One request

    private struct Done {
        var failure: RemoteFileFailure?
        var bytesSent: Int64
    }

    private func perform(_ url: String, _ controls: RemoteFileControls, body source: UploadSource?, _ setup: (CurlHandle) -> Void) -> Done {
        let request = UploadRequest(
            url: url, method: .put, headers: [],
            body: RequestBody(source.map { [.file(fd: $0.fd, offset: 0, length: $0.size)] } ?? []),
            connectTimeout: controls.connectTimeout, stallTimeout: controls.stallTimeout, timeout: controls.timeout, tls: controls.tls,
            proxy: nil, rateLimiter: source == nil ? nil : controls.rateLimiter, cancellation: controls.cancellation,
            progress: source == nil ? nil : controls.progress, sourcePath: controls.sourcePath)
        let context = CurlTransferContext(request: request)
        let hostKey = HostKeyCheck(target: target)
        return withExtendedLifetime((context, hostKey)) {
            let userdata = Unmanaged.passUnretained(context).toOpaque()
            configure(url, controls, context: context, userdata: userdata)
            if target.scheme == .sftp { hostKey.install(on: handle, userdata: Unmanaged.passUnretained(hostKey).toOpaque()) }
            setup(handle)
            defer { handle.set(CURLOPT_ERRORBUFFER, pointer: nil) }
            let code = curl_easy_perform(handle.raw)
            if target.scheme != .sftp, let entry = handle.string(CURLINFO_FTP_ENTRY_PATH), !entry.isEmpty { ftpEntryPath = entry }
            let sent = handle.offset(CURLINFO_SIZE_UPLOAD_T)
            guard code != CURLE_OK else { return Done(failure: nil, bytesSent: sent) }
            let failure = RemoteFileClassifier(
                target: target, code: code, detail: context.errorDetail.isEmpty ? String(cString: curl_easy_strerror(code)) : context.errorDetail,
                connected: handle.offset(CURLINFO_CONNECT_TIME_T) > 0, cancelled: controls.cancellation.isCancelled,
                stalled: context.stalled, stallTimeout: controls.stallTimeout, readError: context.readError,
                hostKeyRefusal: hostKey.refusal, serverReply: handle.long(CURLINFO_RESPONSE_CODE), bytesSent: sent).failure
            return Done(failure: failure, bytesSent: sent)
        }
    }

    private func configure(_ url: String, _ controls: RemoteFileControls, context: CurlTransferContext, userdata: UnsafeMutableRawPointer) {
        let h = handle
        h.reset()
        h.set(CURLOPT_URL, url)
        h.set(CURLOPT_NOSIGNAL, 1)
        h.set(CURLOPT_ERRORBUFFER, pointer: UnsafeMutableRawPointer(context.errorBuffer))
        // No proxy: the environment's http_proxy/all_proxy are not for these protocols.
        h.set(CURLOPT_PROXY, "")
        h.set(CURLOPT_READFUNCTION, callback: curlReadCallback)
        h.set(CURLOPT_READDATA, pointer: userdata)
        h.setSeek(curlSeekCallback)
        h.set(CURLOPT_SEEKDATA, pointer: userdata)
        h.set(CURLOPT_WRITEFUNCTION, callback: curlWriteCallback)
        h.set(CURLOPT_WRITEDATA, pointer: userdata)
        h.set(CURLOPT_NOPROGRESS, 0)
        h.setProgress(curlProgressCallback)
        h.set(CURLOPT_XFERINFODATA, pointer: userdata)
        if controls.connectTimeout > 0 { h.set(CURLOPT_CONNECTTIMEOUT_MS, max(1, Int((controls.connectTimeout * 1000).rounded(.up)))) }
        if controls.timeout > 0 { h.set(CURLOPT_TIMEOUT_MS, max(1, Int((controls.timeout * 1000).rounded(.up)))) }
        if let password = target.password { h.set(CURLOPT_PASSWORD, password.value) }
        switch target.scheme {
        case .sftp:
            var methods = 0
            if let key = target.privateKeyFile {
                h.set(CURLOPT_SSH_PRIVATE_KEYFILE, key)
                if let passphrase = target.passphrase { h.set(CURLOPT_KEYPASSWD, passphrase.value) }
                methods |= Int(CURLSSH_AUTH_PUBLICKEY)
            }
            if target.password != nil { methods |= Int(CURLSSH_AUTH_PASSWORD) | Int(CURLSSH_AUTH_KEYBOARD) }
            h.set(CURLOPT_SSH_AUTH_TYPES, methods)
        case .ftps, .ftp:
            if target.scheme == .ftps || target.tls == .required { h.set(CURLOPT_USE_SSL, Int(CURLUSESSL_ALL.rawValue)) }
            let tls = controls.tls
            h.set(CURLOPT_SSL_VERIFYPEER, tls.insecureSkipVerify ? 0 : 1)
            h.set(CURLOPT_SSL_VERIFYHOST, tls.insecureSkipVerify ? 0 : 2)
            if let caFile = tls.caFile { h.set(CURLOPT_CAINFO, caFile) }
            if let cert = tls.clientCert { h.set(CURLOPT_SSLCERT, cert) }
            if let key = tls.clientKey { h.set(CURLOPT_SSLKEY, key) }
        }
    }
}
