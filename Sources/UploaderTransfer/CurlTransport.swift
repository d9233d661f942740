import CCurl
import Foundation
import UploaderSupport
import UploaderConfig

/// The production `Transport`: HTTP(S) uploads through libcurl, streaming the body from its file.
///
/// Owns one easy handle reused for every `send`, so keep-alive connections are reused.
/// Not thread-safe: one worker thread owns one transport. `send` blocks that thread.
package final class CurlTransport: Transport {
    private let handle = CurlHandle()

    package init() {}

    /// Follows redirects by hand (`RedirectFollowing`: same scheme and host:port only).
    package func send(_ request: UploadRequest) -> Result<UploadResponse, TransferFailure> {
        RedirectFollowing.send(request) { url in
            (perform(request, url: url), handle.string(CURLINFO_REDIRECT_URL))
        }
    }

    /// One request/response exchange on the reused handle.
    private func perform(_ request: UploadRequest, url: String) -> Result<UploadResponse, TransferFailure> {
        let context = CurlTransferContext(request: request)
        var headers: UnsafeMutablePointer<curl_slist>?
        defer { curl_slist_free_all(headers) }
        for header in request.headers {
            headers = curl_slist_append(headers, "\(header.name): \(header.value)")
        }
        // An empty `Expect:` stops curl from waiting for `100 Continue` before the body.
        headers = curl_slist_append(headers, "Expect:")
        if request.method == .post, !request.headers.contains(where: { $0.name.lowercased() == "content-type" }) {
            // A POST that names no type (tus creation) must not get curl's form type.
            headers = curl_slist_append(headers, "Content-Type:")
        }

        return withExtendedLifetime(context) {
            let userdata = Unmanaged.passUnretained(context).toOpaque()
            configure(request, url: url, headers: headers, context: context, userdata: userdata)
            // The error buffer dies with the context; curl must not write to it later (e.g. in cleanup).
            defer { handle.set(CURLOPT_ERRORBUFFER, pointer: nil) }
            let code = curl_easy_perform(handle.raw)
            // A refused re-send has reset libcurl's counter: the first request's bytes are those it read.
            let bytesSent = context.resendRefused ? context.position : handle.offset(CURLINFO_SIZE_UPLOAD_T)
            guard code == CURLE_OK else {
                var detail = context.errorDetail.isEmpty ? String(cString: curl_easy_strerror(code)) : context.errorDetail
                if context.stalled {
                    detail = "stalled: no data moved for \(Int(request.stallTimeout.rounded(.up))) s (stall_timeout)"
                } else if context.resendRefused {
                    detail = "connection closed before an answer arrived"
                }
                let outcome = CurlOutcome(
                    code: code,
                    connected: handle.offset(CURLINFO_CONNECT_TIME_T) > 0 || bytesSent > 0 || context.head.status > 0,
                    cancelled: request.cancellation.isCancelled,
                    stalled: context.stalled,
                    resendRefused: context.resendRefused,
                    readError: context.readError,
                    detail: detail,
                    bytesSent: bytesSent)
                return .failure(outcome.failure)
            }
            return .success(context.head.response(
                status: handle.long(CURLINFO_RESPONSE_CODE), body: String(decoding: context.responseBody, as: UTF8.self),
                bytesSent: bytesSent, effectiveURL: handle.string(CURLINFO_EFFECTIVE_URL) ?? url))
        }
    }

    private func configure(_ request: UploadRequest, url: String, headers: UnsafeMutablePointer<curl_slist>?,
                           context: CurlTransferContext, userdata: UnsafeMutableRawPointer) {
        let h = handle
        h.reset()
        h.set(CURLOPT_URL, url)
        h.set(CURLOPT_NOSIGNAL, 1)
        h.set(CURLOPT_FOLLOWLOCATION, 0)
        h.set(CURLOPT_ERRORBUFFER, pointer: UnsafeMutableRawPointer(context.errorBuffer))
        h.set(CURLOPT_HTTPHEADER, list: headers)

        switch request.method {
        case .put:
            h.set(CURLOPT_UPLOAD, 1)
            h.set(CURLOPT_INFILESIZE_LARGE, offset: context.length)
        case .post:
            h.set(CURLOPT_POST, 1)
            h.set(CURLOPT_POSTFIELDSIZE_LARGE, offset: context.length)
        case .patch:
            h.set(CURLOPT_UPLOAD, 1)
            h.set(CURLOPT_INFILESIZE_LARGE, offset: context.length)
            h.set(CURLOPT_CUSTOMREQUEST, "PATCH")
        case .get:
            h.set(CURLOPT_HTTPGET, 1)
        case .head:
            h.set(CURLOPT_NOBODY, 1)
        case .delete, .options, .mkcol:
            h.set(CURLOPT_CUSTOMREQUEST, request.method.rawValue)
        }
        h.set(CURLOPT_READFUNCTION, callback: curlReadCallback)
        h.set(CURLOPT_READDATA, pointer: userdata)
        h.setSeek(curlSeekCallback)
        h.set(CURLOPT_SEEKDATA, pointer: userdata)
        h.setPrerequest(curlPrerequestCallback)
        h.set(CURLOPT_PREREQDATA, pointer: userdata)
        h.set(CURLOPT_HEADERFUNCTION, callback: curlHeaderCallback)
        h.set(CURLOPT_HEADERDATA, pointer: userdata)
        h.set(CURLOPT_WRITEFUNCTION, callback: curlWriteCallback)
        h.set(CURLOPT_WRITEDATA, pointer: userdata)
        h.set(CURLOPT_NOPROGRESS, 0)
        h.setProgress(curlProgressCallback)
        h.set(CURLOPT_XFERINFODATA, pointer: userdata)

        if request.connectTimeout > 0 { h.set(CURLOPT_CONNECTTIMEOUT_MS, CurlTransport.milliseconds(request.connectTimeout)) }
        if request.stallTimeout > 0 {
            h.set(CURLOPT_LOW_SPEED_LIMIT, 1)
            h.set(CURLOPT_LOW_SPEED_TIME, max(1, Int(request.stallTimeout.rounded(.up))))
        }
        if request.timeout > 0 { h.set(CURLOPT_TIMEOUT_MS, CurlTransport.milliseconds(request.timeout)) }

        let tls = request.tls
        h.set(CURLOPT_SSL_VERIFYPEER, tls.insecureSkipVerify ? 0 : 1)
        h.set(CURLOPT_SSL_VERIFYHOST, tls.insecureSkipVerify ? 0 : 2)
        if let caFile = tls.caFile { h.set(CURLOPT_CAINFO, caFile) }
        if let cert = tls.clientCert { h.set(CURLOPT_SSLCERT, cert) }
        if let key = tls.clientKey { h.set(CURLOPT_SSLKEY, key) }
        // Without a proxy of ours libcurl reads http_proxy, https_proxy, all_proxy and no_proxy
        // itself (reset() above leaves that on); `proxy` replaces the first three, no_proxy still applies.
        if let proxy = request.proxy { h.set(CURLOPT_PROXY, proxy) }
    }

    private static func milliseconds(_ interval: TimeInterval) -> Int {
        max(1, Int((interval * 1000).rounded(.up)))
    }
}
