import Foundation
import UploaderSupport

/// Sends a request again where its destination redirects it, as long as `RedirectPolicy` allows
/// the hop (same scheme and host:port) and at most `maxHops` times; any other redirect comes
/// back as the answer. The transport's one exchange is a closure, so the simulator's transport
/// follows redirects through this same code.
package enum RedirectFollowing {
    package static let maxHops = 5

    package static func isRedirect(_ status: Int) -> Bool { [301, 302, 303, 307, 308].contains(status) }

    /// `exchange(url)` sends the request to `url` once; it returns the result and, for a
    /// redirect, the absolute URL the answer points to.
    package static func send(_ request: UploadRequest,
                             exchange: (String) -> (result: Result<UploadResponse, TransferFailure>, redirectTo: String?))
        -> Result<UploadResponse, TransferFailure> {
        var url = request.url
        var hops = 0
        while true {
            // Before a redirect hop, the earlier requests have reached the destination.
            if request.cancellation.isCancelled { return .failure(.cancelled(bytesSent: 0, connected: hops > 0)) }
            let (result, target) = exchange(url)
            // A hop cancelled before it connected: the earlier hops reached the destination all the same.
            if hops > 0, case .failure(.cancelled(let sent, connected: false)) = result {
                return .failure(.cancelled(bytesSent: sent, connected: true))
            }
            guard case .success(let response) = result, isRedirect(response.status), hops < maxHops,
                  let target, RedirectPolicy.mayFollow(from: url, to: target)
            else { return result }
            url = target
            hops += 1
        }
    }
}
