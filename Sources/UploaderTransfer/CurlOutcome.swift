import CCurl
import UploaderSupport
import UploaderConfig

/// What one failed `curl_easy_perform` left behind, and its single mapping to `TransferFailure`.
///
/// A plain value so the classification is testable without a network: the decision is
/// made from the CURLcode and facts about the transfer, never from message text.
package struct CurlOutcome: Sendable, Equatable {
    package var code: CURLcode
    /// A TCP connection to the destination was established (or reused).
    package var connected: Bool
    package var cancelled: Bool
    /// Our progress callback stopped it: nothing moved for the stall timeout.
    package var stalled: Bool
    /// We refused libcurl's own re-send of the request (see `CurlTransferContext.resendRefused`).
    package var resendRefused: Bool
    /// Our read callback's own failure (errno text and path), if that is what stopped curl.
    package var readError: String?
    /// CURLOPT_ERRORBUFFER text, or curl_easy_strerror when empty.
    package var detail: String
    package var bytesSent: Int64

    package init(code: CURLcode, connected: Bool, cancelled: Bool = false, stalled: Bool = false,
                 resendRefused: Bool = false, readError: String? = nil, detail: String = "", bytesSent: Int64 = 0) {
        self.code = code
        self.connected = connected
        self.cancelled = cancelled
        self.stalled = stalled
        self.resendRefused = resendRefused
        self.readError = readError
        self.detail = detail
        self.bytesSent = bytesSent
    }

    package var failure: TransferFailure {
        if let readError { return .localRead(readError) }
        if cancelled && (code == CURLE_ABORTED_BY_CALLBACK || code == CURLE_READ_ERROR) {
            return .cancelled(bytesSent: bytesSent, connected: connected)
        }
        if stalled && code == CURLE_ABORTED_BY_CALLBACK {
            return .broken(detail, bytesSent: bytesSent)
        }
        if resendRefused && (code == CURLE_ABORTED_BY_CALLBACK || code == CURLE_SEND_FAIL_REWIND) {
            return .broken(detail, bytesSent: bytesSent)
        }
        switch code {
        case CURLE_COULDNT_RESOLVE_HOST, CURLE_COULDNT_RESOLVE_PROXY, CURLE_COULDNT_CONNECT:
            return .unreachable(detail)
        case CURLE_PROXY:
            // The proxy refused or failed the tunnel (CONNECT answered 502, a SOCKS refusal):
            // no request reached the destination, so no attempt; the probe asks again.
            return .unreachable(detail)
        case CURLE_OPERATION_TIMEDOUT:
            if !connected { return .unreachable(detail) }
            return .broken(detail, bytesSent: bytesSent)
        case CURLE_SEND_ERROR, CURLE_RECV_ERROR, CURLE_GOT_NOTHING, CURLE_PARTIAL_FILE,
             CURLE_HTTP2, CURLE_HTTP2_STREAM, CURLE_HTTP3:
            return .broken(detail, bytesSent: bytesSent)
        case CURLE_PEER_FAILED_VERIFICATION, CURLE_SSL_CONNECT_ERROR, CURLE_SSL_CERTPROBLEM,
             CURLE_SSL_CACERT_BADFILE, CURLE_SSL_CIPHER, CURLE_SSL_ENGINE_NOTFOUND,
             CURLE_SSL_ENGINE_SETFAILED, CURLE_SSL_ENGINE_INITFAILED, CURLE_SSL_PINNEDPUBKEYNOTMATCH,
             CURLE_SSL_INVALIDCERTSTATUS, CURLE_SSL_ISSUER_ERROR, CURLE_SSL_CRL_BADFILE,
             CURLE_SSL_CLIENTCERT:
            let what = code == CURLE_PEER_FAILED_VERIFICATION || code == CURLE_SSL_CACERT_BADFILE
                ? "TLS certificate verification failed" : "TLS handshake failed"
            return .tls("\(what): \(detail)")
        case CURLE_READ_ERROR:
            return .localRead(detail)
        default:
            return .other(detail)
        }
    }
}
