import CCurl
import UploaderSupport
import UploaderConfig

/// One libcurl easy handle: typed setters over the variadic C API, freed on deinit.
///
/// Reused across requests so keep-alive connections (kept inside the handle) are reused.
final class CurlHandle {
    let raw: UnsafeMutableRawPointer

    init() {
        _ = curlGlobalInit
        guard let handle = curl_easy_init() else { fatalError("curl_easy_init failed: out of memory") }
        raw = handle
    }

    deinit { curl_easy_cleanup(raw) }

    /// Forgets every option of the previous request; live connections and caches stay.
    func reset() { curl_easy_reset(raw) }

    func set(_ option: CURLoption, _ value: Int) { check(uploader_curl_setopt_long(raw, option, value), option) }
    func set(_ option: CURLoption, offset value: Int64) { check(uploader_curl_setopt_off(raw, option, curl_off_t(value)), option) }
    func set(_ option: CURLoption, _ value: String) {
        // libcurl copies string options (since 7.17), so a temporary C string is enough.
        check(value.withCString { uploader_curl_setopt_str(raw, option, $0) }, option)
    }
    func set(_ option: CURLoption, pointer value: UnsafeMutableRawPointer?) { check(uploader_curl_setopt_ptr(raw, option, value), option) }
    func set(_ option: CURLoption, list: UnsafeMutablePointer<curl_slist>?) { check(uploader_curl_setopt_slist(raw, option, list), option) }
    func set(_ option: CURLoption, callback: uploader_curl_data_cb) { check(uploader_curl_setopt_data_cb(raw, option, callback), option) }
    func setProgress(_ callback: uploader_curl_xferinfo_cb) { check(uploader_curl_setopt_xferinfo_cb(raw, callback), CURLOPT_XFERINFOFUNCTION) }
    func setSeek(_ callback: uploader_curl_seek_cb) { check(uploader_curl_setopt_seek_cb(raw, callback), CURLOPT_SEEKFUNCTION) }
    func setSSHKeyCheck(_ callback: uploader_curl_sshkey_cb) { check(uploader_curl_setopt_sshkey_cb(raw, callback), CURLOPT_SSH_KEYFUNCTION) }
    func setSSHHostKeyCheck(_ callback: uploader_curl_sshhostkey_cb) {
        check(uploader_curl_setopt_sshhostkey_cb(raw, callback), CURLOPT_SSH_HOSTKEYFUNCTION)
    }
    func setPrerequest(_ callback: uploader_curl_prereq_cb) { check(uploader_curl_setopt_prereq_cb(raw, callback), CURLOPT_PREREQFUNCTION) }

    func long(_ info: CURLINFO) -> Int {
        var value = 0
        _ = uploader_curl_getinfo_long(raw, info, &value)
        return value
    }

    func offset(_ info: CURLINFO) -> Int64 {
        var value: curl_off_t = 0
        _ = uploader_curl_getinfo_off(raw, info, &value)
        return Int64(value)
    }

    func string(_ info: CURLINFO) -> String? {
        var value: UnsafeMutablePointer<CChar>?
        guard uploader_curl_getinfo_str(raw, info, &value) == CURLE_OK, let value else { return nil }
        return String(cString: value)
    }

    /// An option this libcurl rejects is a programming error (or a libcurl too old to run on).
    private func check(_ code: CURLcode, _ option: CURLoption) {
        precondition(code == CURLE_OK, "curl_easy_setopt(\(option.rawValue)) failed: \(String(cString: curl_easy_strerror(code)))")
    }
}

/// `curl_global_init`, run exactly once per process (Swift globals initialise lazily and once).
let curlGlobalInit: Void = {
    let code = curl_global_init(Int(CURL_GLOBAL_ALL))
    precondition(code == CURLE_OK, "curl_global_init failed: \(String(cString: curl_easy_strerror(code)))")
}()
