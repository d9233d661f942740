import Foundation
import UploaderSupport
import UploaderConfig
import UploaderTransfer

/// Production's `RemoteFileSession` seam, answered by `SimSFTPServer` through the worker's
/// `SimTransport`: each operation one request, with the faults every request meets there.
/// Answers are read as libcurl's SFTP outcomes would be sorted (a refused login for 403, a full
/// disk for 507, a transient refusal for a 408, 429 or 5xx; the protocol has no `Retry-After`,
/// and the model never sends one, `SimSFTPServer.carriesRetryAfter`).
final class SimRemoteFileSession: RemoteFileSession {
    let transport: any Transport

    init(transport: any Transport) {
        self.transport = transport
    }

    private func request(_ method: HTTPMethod, _ path: String, _ controls: RemoteFileControls, headers: [(name: String, value: String)] = [],
                         body: RequestBody = RequestBody([])) -> UploadRequest {
        UploadRequest(url: SimDestination.sftpOrigin + path, method: method,
                      headers: [(SimSFTPServer.idHeader, controls.uploadID)] + headers, body: body,
                      connectTimeout: controls.connectTimeout, stallTimeout: controls.stallTimeout, timeout: controls.timeout,
                      tls: controls.tls, proxy: nil, rateLimiter: body.length > 0 ? controls.rateLimiter : nil,
                      cancellation: controls.cancellation, progress: controls.progress, sourcePath: controls.sourcePath)
    }

    /// The answer, or the failure libcurl would report for it.
    private func send(_ request: UploadRequest) -> Result<UploadResponse, RemoteFileFailure> {
        switch transport.send(request) {
        case .success(let answer):
            let status = answer.status
            switch status {
            case 200...299: return .success(answer)
            case 403: return .failure(RemoteFileFailure(.loginRefused, "login refused: Authentication failure"))
            case 404, 409: return .failure(RemoteFileFailure(.pathRefused, "SFTP status \(status)", bytesSent: answer.bytesSent))
            case 507: return .failure(RemoteFileFailure(.full, "server's disk full or quota exceeded", bytesSent: answer.bytesSent))
            case 408, 429, 500...599:
                return .failure(RemoteFileFailure(.transient, "server answered \(status)", bytesSent: answer.bytesSent))
            default:
                return .failure(RemoteFileFailure(.other, "server answered \(status)", bytesSent: answer.bytesSent))
            }
        case .failure(let failure):
            switch failure {
            case .unreachable(let m): return .failure(RemoteFileFailure(.unreachable, m))
            case .broken(let m, let sent): return .failure(RemoteFileFailure(.broken, m, bytesSent: sent))
            case .tls(let m): return .failure(RemoteFileFailure(.tls, m))
            case .localRead(let m): return .failure(RemoteFileFailure(.localRead, m))
            case .cancelled(let sent, let connected): return .failure(RemoteFileFailure(.cancelled(connected: connected), "cancelled", bytesSent: sent))
            case .other(let m): return .failure(RemoteFileFailure(.other, m))
            }
        }
    }

    func size(of path: String, _ controls: RemoteFileControls) -> Result<Int64?, RemoteFileFailure> {
        switch send(request(.head, path, controls)) {
        case .success(let answer): return .success(answer.headers["content-length"].flatMap { Int64($0) })
        case .failure(let failure) where failure.kind == .pathRefused: return .success(nil)
        case .failure(let failure): return .failure(failure)
        }
    }

    func upload(_ source: UploadSource, to path: String, append: Bool, _ controls: RemoteFileControls) -> Result<Int64, RemoteFileFailure> {
        let version = SimSFTPServer.version(id: source.id, size: source.size, mtime: source.status.mtimeText)
        let body = RequestBody([.file(fd: source.fd, offset: 0, length: source.size)])
        return send(request(.put, path, controls, headers: [(SimSFTPServer.versionHeader, version), (SimSFTPServer.appendHeader, append ? "1" : "0")],
                            body: body)).map(\.bytesSent)
    }

    func rename(_ from: String, to: String, _ controls: RemoteFileControls) -> Result<Void, RemoteFileFailure> {
        send(request(.patch, from, controls, headers: [(SimSFTPServer.renameHeader, to)])).map { _ in () }
    }

    func delete(_ path: String, _ controls: RemoteFileControls) -> Result<Void, RemoteFileFailure> {
        return send(request(.patch, path, controls, headers: [(SimSFTPServer.deleteHeader, "1")])).map { _ in () }
    }
}
