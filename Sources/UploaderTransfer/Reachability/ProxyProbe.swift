import Foundation
import UploaderSupport
import UploaderConfig

/// Can the destination be reached through the proxy? A `HEAD` of the destination's origin sent
/// the way uploads go (libcurl, the same proxy and TLS settings), since behind a proxy a TCP
/// connect to the destination says nothing: it may fail while the proxy gets through, or
/// succeed while the proxy is down.
///
/// Any answer counts as reachable except `502 Bad Gateway` and `504 Gateway Timeout`: through a
/// proxy those are the proxy saying it could not reach the destination. No credentials are sent.
package struct ProxyProbe: ReachabilityProbe {
    /// `scheme://host[:port]/` of the destination.
    package let url: String
    /// The `proxy` key's URL; nil: libcurl's environment variables.
    package let proxy: String?
    package let tls: TLSOptions
    /// Bounds the connect; the whole exchange gets twice as long (the proxy connects onward).
    package let timeout: TimeInterval

    package init(url: String, proxy: String?, tls: TLSOptions, timeout: TimeInterval) {
        self.url = url
        self.proxy = proxy
        self.tls = tls
        self.timeout = timeout
    }

    package func check() -> String? {
        let request = UploadRequest(url: url, method: .head, headers: [("User-Agent", "uploader/\(UploaderVersion.string)")],
                                    body: RequestBody([]), connectTimeout: timeout, stallTimeout: 0, timeout: 2 * timeout,
                                    tls: tls, proxy: proxy)
        // A transport of its own: probes run on the probe queue, never on an upload's thread.
        switch CurlTransport().send(request) {
        case .success(let response) where response.status == 502 || response.status == 504:
            return "through the proxy: \(HTTPStatus.describe(response.status, text: response.statusText))"
        case .success:
            return nil
        case .failure(let failure):
            return "through the proxy: \(failure.message)"
        }
    }
}
