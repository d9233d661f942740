import CCurl
import Foundation
import UploaderSupport
import UploaderConfig

/// Our own check of an SFTP server's host key, from libcurl's callbacks: against the pinned
/// `host_key_sha256` (CURLOPT_SSH_HOSTKEYFUNCTION, handed the key itself), or against
/// `known_hosts` (CURLOPT_SSH_KEYFUNCTION, after libcurl looked the `[host]:port` entry up).
/// Either way the server's fingerprint is computed here, so a mismatch says both (libcurl 7.88
/// does not report the server's usably). A key not found is refused: no trust on first use.
final class HostKeyCheck {
    let target: RemoteFileTarget
    /// Set when the server's key was refused: the one line saying why, with both fingerprints.
    var refusal: String?

    init(target: RemoteFileTarget) { self.target = target }

    /// `SHA256:…` of a key blob (SSH wire format), as `ssh-keygen -lf` prints it.
    static func fingerprint(_ blob: UnsafeRawBufferPointer) -> String {
        "SHA256:" + base64(SHA256.hash(Array(blob)))
    }

    static func base64(_ bytes: [UInt8]) -> String {
        var text = Data(bytes).base64EncodedString()
        while text.hasSuffix("=") { text.removeLast() }
        return text
    }

    /// The key type a blob names first (`ssh-ed25519`), or `unknown`.
    static func keyType(_ blob: UnsafeRawBufferPointer) -> String {
        guard blob.count >= 4 else { return "unknown" }
        let length = Int(blob[0]) << 24 | Int(blob[1]) << 16 | Int(blob[2]) << 8 | Int(blob[3])
        guard length > 0, length < 64, blob.count >= 4 + length else { return "unknown" }
        return String(decoding: blob[4..<(4 + length)], as: UTF8.self)
    }

    /// The pinned fingerprint against the server's key; true to go on.
    func checkPinned(_ blob: UnsafeRawBufferPointer) -> Bool {
        guard let pinned = target.hostKeySHA256 else { return false }
        let offered = Self.fingerprint(blob)
        if offered == "SHA256:" + pinned { return true }
        refusal = "host key of \(target.knownHostsName) does not match: the server offers \(offered) (\(Self.keyType(blob))), "
            + "host_key_sha256 is SHA256:\(pinned)"
        return false
    }

    /// libcurl's known_hosts lookup: `known` the file's entry (base64, nil when there is none).
    func checkKnown(found blob: UnsafeRawBufferPointer, known: String?, matched: Bool) -> Bool {
        if matched { return true }
        let offered = Self.fingerprint(blob)
        let file = target.knownHosts ?? "known_hosts"
        if let known, let data = Data(base64Encoded: known) {
            let expected = data.withUnsafeBytes { Self.fingerprint($0) }
            refusal = "host key of \(target.knownHostsName) does not match: the server offers \(offered) (\(Self.keyType(blob))), "
                + "known_hosts \(file) has \(expected)"
        } else {
            refusal = "host key of \(target.knownHostsName) is not in known_hosts \(file): the server offers \(offered) "
                + "(\(Self.keyType(blob))); add a [host]:port line for it after checking it out of band"
        }
        return false
    }

    /// Sets the callbacks on `handle`, which must outlive `self`'s use by libcurl (one perform).
    func install(on handle: CurlHandle, userdata: UnsafeMutableRawPointer) {
        if let knownHosts = target.knownHosts {
            handle.set(CURLOPT_SSH_KNOWNHOSTS, knownHosts)
            handle.setSSHKeyCheck(sshKeyCallback)
            handle.set(CURLOPT_SSH_KEYDATA, pointer: userdata)
        } else {
            handle.setSSHHostKeyCheck(sshHostKeyCallback)
            handle.set(CURLOPT_SSH_HOSTKEYDATA, pointer: userdata)
        }
    }
}

/// CURLOPT_SSH_KEYFUNCTION: libcurl looked the host up in known_hosts (`match`).
private let sshKeyCallback: uploader_curl_sshkey_cb = { _, known, found, match, userdata in
    let check = Unmanaged<HostKeyCheck>.fromOpaque(userdata!).takeUnretainedValue()
    guard let found else { return Int32(CURLKHSTAT_REJECT.rawValue) }
    let blob = UnsafeRawBufferPointer(start: found.pointee.key, count: found.pointee.len)
    let knownKey: String? = if match == CURLKHMATCH_MISMATCH, let known, let key = known.pointee.key {
        known.pointee.len == 0 ? String(cString: key) : Data(bytes: key, count: known.pointee.len).base64EncodedString()
    } else { nil }
    let fine = check.checkKnown(found: blob, known: knownKey, matched: match == CURLKHMATCH_OK)
    return Int32(fine ? CURLKHSTAT_FINE.rawValue : CURLKHSTAT_REJECT.rawValue)
}

/// CURLOPT_SSH_HOSTKEYFUNCTION: the server's key itself, against the pinned fingerprint.
private let sshHostKeyCallback: uploader_curl_sshhostkey_cb = { userdata, _, key, length in
    let check = Unmanaged<HostKeyCheck>.fromOpaque(userdata!).takeUnretainedValue()
    let fine = check.checkPinned(UnsafeRawBufferPointer(start: key, count: length))
    return Int32(fine ? CURLKHMATCH_OK.rawValue : CURLKHMATCH_MISMATCH.rawValue)
}
