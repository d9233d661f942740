@preconcurrency import Glibc
import Foundation

/// The `uploader` Debian package on this machine for the length of one test: installed
/// and purged with apt-get, then the machine put back as it was. Purge keeps the system
/// user and /var/spool/uploader on purpose; `restore()` removes them only when this test
/// made them (the drop group uploader-drop too).
final class SystemPackage {
    static let spoolRoot = "/var/spool/uploader"
    private let userExisted: Bool
    private let dropGroupExisted: Bool
    private let spoolExisted: Bool

    /// Fails (never skips) when the machine cannot run the test or already has the package.
    init() throws {
        guard getuid() == 0 else { throw HarnessError("the package test installs a .deb with apt-get: run it as root") }
        for tool in ["apt-get", "dpkg-query", "dpkg-deb", "dpkg-shlibdeps", "dpkg-statoverride", "lintian",
                     "systemd-analyze", "unshare", "man", "userdel"] where ProcessRunner.which(tool) == nil {
            throw HarnessError("\(tool) is not installed: run scripts/install-deps.sh. This is a test failure, not a skip.")
        }
        let status = try Self.status()
        guard status.isEmpty || status == "not-installed" else {
            throw HarnessError("the uploader package is on this machine (dpkg status \"\(status)\"); this test installs "
                + "and purges it, so it will not touch yours: apt-get purge uploader, then run it again")
        }
        userExisted = getpwnam("uploader") != nil
        dropGroupExisted = getgrnam("uploader-drop") != nil
        spoolExisted = FileManager.default.fileExists(atPath: Self.spoolRoot)
    }

    /// dpkg's state of the package: `installed`, `config-files`, … or empty when unknown to dpkg.
    static func status() throws -> String {
        try ProcessRunner.run(["dpkg-query", "-W", "-f=${db:Status-Status}", "uploader"]).stdout
    }

    /// `apt-get ARGS` without questions, waiting for a dpkg lock another apt run may hold.
    @discardableResult
    func apt(_ arguments: [String]) throws -> ProcessResult {
        try ProcessRunner.run(
            ["apt-get", "-y", "-q", "--no-install-recommends", "-o", "DPkg::Lock::Timeout=300"] + arguments,
            environment: ["DEBIAN_FRONTEND": "noninteractive"], timeout: 600)
    }

    /// Purges the package if it is still there, and removes the user and the spool root
    /// if they did not exist before the test.
    func restore() {
        let status = (try? Self.status()) ?? ""
        if !status.isEmpty && status != "not-installed" { _ = try? apt(["purge", "uploader"]) }
        if !spoolExisted { try? FileManager.default.removeItem(atPath: Self.spoolRoot) }
        if !userExisted && getpwnam("uploader") != nil {
            _ = try? ProcessRunner.run(["userdel", "uploader"])
            _ = try? ProcessRunner.run(["groupdel", "uploader"])
        }
        if !dropGroupExisted && getgrnam("uploader-drop") != nil { _ = try? ProcessRunner.run(["groupdel", "uploader-drop"]) }
    }
}
