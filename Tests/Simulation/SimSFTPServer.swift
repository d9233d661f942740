import Foundation
import UploaderSupport
import UploaderTransfer

/// The SFTP server a schedule with an `sftp://` url uploads to, as OpenSSH's sftp-server
/// behaves: files by path; an upload replaces a file or appends past what it holds; a rename
/// refuses an existing target; a write may meet a full disk (part of it kept, then a failure).
/// `SimRemoteFileSession` speaks to it in requests (`HEAD` size, `PUT` upload, `PATCH` rename or
/// delete), so the faults of `SimTransport` reach every operation. (Not `DELETE`: `SimTransport`
/// takes that for the request that ends an S3 or tus upload, which opens no attempt.)
///
/// Each byte is kept with the version of the file it was sent for (manifest id, size, mtime), for
/// the invariant that a final name only ever holds complete bytes of one version of one file
/// (`sftpFinalNameWhole`): checked at every rename, the only way bytes reach a final name.
final class SimSFTPServer: SimProtocolServer {
    // Used by the thread holding the baton only.

    struct File {
        var data: [UInt8] = []
        /// Runs of bytes and the version each was sent for, in order.
        var versions: [(version: String, count: Int)] = []
    }

    static let idHeader = "X-Upload-Id"
    static let versionHeader = "X-File-Version"
    static let appendHeader = "X-Append"
    static let renameHeader = "X-Rename-To"
    static let deleteHeader = "X-Delete"

    private unowned let log: SimServer
    private let choices: ChoiceSource
    private var files: [String: File] = [:]
    private(set) var violations: [String] = []
    /// SFTP has no way to say when to come back: a refusal is only a status.
    let carriesRetryAfter = false
    let speaksHTTP = false

    init(log: SimServer, choices: ChoiceSource) {
        self.log = log
        self.choices = choices
    }

    /// `id size mtime`: the version of a file an upload sends.
    static func version(id: String, size: Int64, mtime: String) -> String { "\(id) \(size) \(mtime)" }

    private func header(_ request: UploadRequest, _ name: String) -> String? {
        request.headers.first { $0.name == name }?.value
    }

    /// The server path a URL names.
    static func path(ofURL url: String) -> String {
        String(url.dropFirst(SimDestination.sftpOrigin.count)).removingPercentEncoding ?? url
    }

    func identity(of request: UploadRequest) -> String { header(request, Self.idHeader) ?? "" }

    func attempt(of request: UploadRequest, job: Int?) -> Int { job ?? -1 }

    func apply(_ request: UploadRequest, body: [UInt8], partial: Bool, attempt: Int) -> UploadResponse {
        let path = Self.path(ofURL: request.url)
        if partial && request.method != .put { return UploadResponse(status: 400) }
        switch request.method {
        case .head:
            guard let file = files[path] else { return UploadResponse(status: 404) }
            return UploadResponse(status: 200, headers: ["content-length": String(file.data.count)])
        case .put:
            guard let version = header(request, Self.versionHeader) else { return UploadResponse(status: 400) }
            if !path.hasSuffix(".part") { violations.append("bytes written straight under \(path), not a temporary name") }
            let append = header(request, Self.appendHeader) == "1"
            let created = !append || files[path] == nil
            var file = append ? files[path] ?? File() : File()
            // The client sends from the size the server holds (libcurl's resume from -1).
            var incoming = Array(body.dropFirst(append ? min(file.data.count, body.count) : 0))
            let full = !incoming.isEmpty && choices.chance(4)
            if full { incoming = Array(incoming.prefix(choices.below(incoming.count))) }
            file.data += incoming
            // A file made now is this version's even when empty; an append of nothing adds no bytes.
            if created || !incoming.isEmpty { file.versions.append((version, incoming.count)) }
            files[path] = file
            return UploadResponse(status: full ? 507 : 200)
        case .patch where header(request, Self.deleteHeader) != nil:
            return UploadResponse(status: files.removeValue(forKey: path) == nil ? 404 : 200)
        case .patch:
            guard let target = header(request, Self.renameHeader), let file = files[path] else { return UploadResponse(status: 404) }
            // OpenSSH's rename is link + unlink: it refuses an existing target.
            guard files[target] == nil else { return UploadResponse(status: 409) }
            files[path] = nil
            files[target] = file
            published(file, at: target)
            return UploadResponse(status: 200)
        default:
            preconditionFailure("an SFTP request the server does not know: \(request.method) \(request.url)")
        }
    }

    /// Bytes now under a final name: they must be one version's, all of them; kept as delivered.
    private func published(_ file: File, at path: String) {
        let versions = Set(file.versions.map(\.version))
        let declared = versions.count == 1 ? versions.first!.split(separator: " ").dropFirst().first.flatMap { Int($0) } : nil
        if versions.count > 1 {
            violations.append("\(path) holds bytes of \(versions.count) versions: \(file.versions.map { "\($0.count) of \($0.version)" })")
        } else if let declared, declared != file.data.count {
            violations.append("\(path) holds \(file.data.count) bytes of \(versions.first!), which has \(declared)")
        }
        let id = file.versions.first.map { String($0.version.split(separator: " ").first ?? "") } ?? ""
        log.record(SimServer.Request(id: id, bytes: file.data, kept: true, status: 200, opens: false))
    }

    func delivered(_ request: UploadRequest, _ answer: UploadResponse) {}
}
