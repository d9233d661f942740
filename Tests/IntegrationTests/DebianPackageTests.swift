@preconcurrency import Glibc
import Foundation
import XCTest
@testable import UploaderSupport
@testable import UploaderConfig
@testable import UploaderSpool
@testable import UploaderTransfer
@testable import UploaderWatch
@testable import UploaderCore
@testable import UploaderDaemon
@testable import UploaderCommands

/// Issue #17: `scripts/package-deb.sh` builds a package that lintian accepts and apt-get
/// installs; the installed binary runs and uploads with no Swift toolchain in sight; the
/// unit passes `systemd-analyze verify` with an exposure of at most 2.0; a producer in the drop
/// group works with no secret in reach (DebianPackageTests+Producers); purge removes the
/// configuration and keeps every spool. One test, in order, because each step needs the
/// one before (and the release build alone takes a minute or more).
final class DebianPackageTests: XCTestCase {
    private let unit = "/lib/systemd/system/uploader.service"

    func testPackageBuildsInstallsRunsWithoutTheToolchainAndPurgeKeepsSpools() throws {
        let machine = try SystemPackage()
        defer { machine.restore() }
        let out = try TempDir(prefix: "upl-deb")

        let deb = try timed("package-deb.sh") { try buildPackage(into: out.path) }
        try timed("contents") { try checkContents(of: deb) }
        try timed("lintian") { try checkLintian(deb) }
        try timed("install") {
            let result = try machine.apt(["install", deb])
            XCTAssertEqual(result.exitCode, 0, "\(result)")
            XCTAssertEqual(try SystemPackage.status(), "installed")
        }
        try timed("installed files") { try checkInstalledFiles() }
        try timed("systemd-analyze") { try checkUnit() }
        try timed("without the toolchain") { try checkRunsAndUploadsWithoutTheToolchain() }
        try timed("producers and secrets") { try checkProducersAndSecrets() }
        try timed("reinstall") {
            let result = try machine.apt(["install", "--reinstall", deb])
            XCTAssertEqual(result.exitCode, 0, "\(result)")
            try checkInstalledFiles()
        }
        try timed("purge") { try checkPurgeKeepsSpools(machine) }
    }

    /// Runs the script with a SwiftPM scratch directory of its own (`swift test` holds
    /// .build) that stays between runs, so a second run only relinks.
    private func buildPackage(into out: String) throws -> String {
        let result = try ProcessRunner.run(
            ["bash", PackagePaths.root + "/scripts/package-deb.sh",
             "--scratch-path", PackagePaths.root + "/.build/package-test", "--out", out],
            timeout: 1800)
        XCTAssertEqual(result.exitCode, 0, "package-deb.sh failed:\n\(String(result.stderr.suffix(6000)))")
        let arch = try ProcessRunner.run(["dpkg", "--print-architecture"]).stdout
            .trimmingCharacters(in: .whitespacesAndNewlines)
        let deb = out + "/uploader_\(UploaderVersion.string)_\(arch).deb"
        guard FileManager.default.fileExists(atPath: deb) else {
            throw HarnessError("no \(deb) after package-deb.sh; it printed: \(result.stdout) \(String(result.stderr.suffix(3000)))")
        }
        XCTAssertEqual(result.stdout.trimmingCharacters(in: .whitespacesAndNewlines), deb, "the script prints the package's path")
        return deb
    }

    private func checkContents(of deb: String) throws {
        let field = { (name: String) throws -> String in
            try ProcessRunner.run(["dpkg-deb", "--field", deb, name]).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        }
        XCTAssertEqual(try field("Version"), UploaderVersion.string)
        let depends = try field("Depends")
        for library in ["adduser", "libc6", "libcurl4", "libssl3", "libinotifytools0"] {
            XCTAssertTrue(depends.contains(library), "Depends: \(depends) lacks \(library)")
        }
        XCTAssertFalse(depends.lowercased().contains("swift"), "Depends: \(depends)")
        let listing = try ProcessRunner.run(["dpkg-deb", "--contents", deb]).stdout
        for path in ["./usr/bin/uploader", "./etc/uploader/uploader.conf", "." + unit,
                     "./usr/share/man/man1/uploader.1.gz", "./usr/share/man/man5/uploader.conf.5.gz",
                     "./usr/share/doc/uploader/copyright", "./usr/share/doc/uploader/changelog.gz"] {
            XCTAssertTrue(listing.contains(" " + path + "\n"), "\(path) missing from the package:\n\(listing)")
        }
        let conffiles = try ProcessRunner.run(["dpkg-deb", "--info", deb, "conffiles"]).stdout
        XCTAssertEqual(conffiles, "/etc/uploader/uploader.conf\n")
    }

    /// No error; warnings are listed (and justified) in the README.
    private func checkLintian(_ deb: String) throws {
        let result = try ProcessRunner.run(["lintian", "--fail-on", "error", deb], timeout: 600)
        let errors = result.stdout.split(separator: "\n").filter { $0.hasPrefix("E:") }
        XCTAssertEqual(errors, [], "lintian errors")
        XCTAssertEqual(result.exitCode, 0, "\(result)")
        let warnings = result.stdout.split(separator: "\n").filter { $0.hasPrefix("W:") }
        print("DebianPackageTests: lintian warnings: \(warnings.isEmpty ? "none" : warnings.joined(separator: "; "))")
    }

    private func checkInstalledFiles() throws {
        let user = try XCTUnwrap(getpwnam("uploader"), "no system user uploader after install")
        XCTAssertLessThan(user.pointee.pw_uid, 1000, "uploader is a system user")
        XCTAssertEqual(String(cString: user.pointee.pw_shell), "/usr/sbin/nologin")
        let drop = try XCTUnwrap(getgrnam("uploader-drop"), "no drop group uploader-drop after install")
        var members: [String] = []
        var member = drop.pointee.gr_mem
        while let name = member?.pointee { members.append(String(cString: name)); member = member?.advanced(by: 1) }
        XCTAssertEqual(members, ["uploader"], "the service user gives outboxes to the drop group")
        // Others may pass the spool root, not list it; group uploader (the service alone) reads /etc/uploader.
        for (path, owner, group, mode) in [(SystemPackage.spoolRoot, "uploader", "uploader", "751"),
                                           ("/var/lib/uploader", "uploader", "uploader", "755"),
                                           ("/etc/uploader", "root", "uploader", "750"),
                                           ("/etc/uploader/uploader.conf", "root", "uploader", "640")] {
            let attributes = try FileManager.default.attributesOfItem(atPath: path)
            XCTAssertEqual(attributes[.ownerAccountName] as? String, owner, path)
            XCTAssertEqual(attributes[.groupOwnerAccountName] as? String, group, path)
            XCTAssertEqual((attributes[.posixPermissions] as? Int).map { String($0, radix: 8) }, mode, path)
        }
        let version = try ProcessRunner.run(["/usr/bin/uploader", "--version"])
        XCTAssertEqual(version.stdout, "uploader \(UploaderVersion.string)\n", "\(version)")
        let manual = try ProcessRunner.run(["man", "-w", "uploader.conf"])
        XCTAssertEqual(manual.stdout, "/usr/share/man/man5/uploader.conf.5.gz\n", "\(manual)")
    }

    private func checkUnit() throws {
        let verify = try ProcessRunner.run(["systemd-analyze", "verify", unit])
        XCTAssertEqual(verify.exitCode, 0, "\(verify)")
        XCTAssertEqual(verify.stdout + verify.stderr, "", "systemd-analyze verify complains")
        let security = try ProcessRunner.run(["systemd-analyze", "security", "--offline=true", unit])
        XCTAssertEqual(security.exitCode, 0, "\(security)")
        let marker = "Overall exposure level for uploader.service: "
        let exposure = security.stdout.components(separatedBy: marker).dropFirst().first?
            .split(separator: " ").first.flatMap { Double($0) }
        let level = try XCTUnwrap(exposure, "no exposure level in: \(security.stdout)")
        XCTAssertLessThanOrEqual(level, 2.0, security.stdout)
        print("DebianPackageTests: systemd-analyze security exposure \(level)")
    }

    /// The proof that the toolchain is hidden (its libswiftCore.so is gone and the debug
    /// build of uploader, linked against its runtime, cannot start), then `--version` and one real
    /// upload through the installed binary in that same kind of namespace.
    private func checkRunsAndUploadsWithoutTheToolchain() throws {
        let hidden = try HiddenToolchain()
        XCTAssertTrue(FileManager.default.fileExists(atPath: hidden.swiftCore))
        let gone = try hidden.run(["test", "-e", hidden.swiftCore])
        XCTAssertEqual(gone.exitCode, 1, "\(hidden.swiftCore) still visible: \(gone)")
        let dynamic = try hidden.run([try UploaderBinary().path, "--version"])
        XCTAssertEqual(dynamic.exitCode, 127, "the toolchain-linked build should not start there: \(dynamic)")
        XCTAssertTrue(dynamic.stderr.contains("error while loading shared libraries: libswift"), "\(dynamic)")

        let version = try hidden.run(["/usr/bin/uploader", "--version"])
        XCTAssertEqual(version.exitCode, 0, "\(version)")
        XCTAssertEqual(version.stdout, "uploader \(UploaderVersion.string)\n")

        let sink = try NginxSink()
        let tmp = try TempDir()
        let file = try tmp.writeRandom("spool/outbox/report 1.bin", count: 1_500_000)
        let hash = try sha256(ofFile: file)
        let config = try tmp.write("uploader.conf", """
            [outbox packaged]
            spool = spool
            url = \(sink.url("deb/{path}"))

            """)
        let run = try hidden.run(["/usr/bin/uploader", "run", "--once", "--config", config], timeout: 120)
        XCTAssertEqual(run.exitCode, 0, "\(run)")
        XCTAssertEqual(try sha256(ofFile: sink.file("deb/report 1.bin")), hash, "bytes that arrived")
        XCTAssertEqual(try sha256(ofFile: tmp.path("spool/sent/report 1.bin")), hash, "filed in sent/")
    }

    /// A spool with a file still queued, then purge: configuration and records gone,
    /// the spool and its file untouched.
    private func checkPurgeKeepsSpools(_ machine: SystemPackage) throws {
        let queued = SystemPackage.spoolRoot + "/photos/outbox/queued.bin"
        try FileManager.default.createDirectory(
            atPath: (queued as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        let content = Data("not delivered yet\n".utf8)
        try content.write(to: URL(fileURLWithPath: queued))

        let result = try machine.apt(["purge", "uploader"])
        XCTAssertEqual(result.exitCode, 0, "\(result)")
        XCTAssertTrue(["", "not-installed"].contains(try SystemPackage.status()), "dpkg still knows the package")
        for path in ["/usr/bin/uploader", unit, "/etc/uploader", "/var/lib/uploader"] {
            XCTAssertFalse(FileManager.default.fileExists(atPath: path), "\(path) left after purge")
        }
        let override = try ProcessRunner.run(["dpkg-statoverride", "--list", "/etc/uploader*"])
        XCTAssertEqual(override.stdout, "", "statoverride left after purge")
        XCTAssertEqual(FileManager.default.contents(atPath: queued), content, "purge touched a spool")
        XCTAssertNotNil(getpwnam("uploader"), "the user that owns the spools stays")
    }

    /// Runs `body` and prints how long it took (the CI cost of this test, step by step).
    private func timed<T>(_ step: String, _ body: () throws -> T) rethrows -> T {
        let start = Date()
        defer { print(String(format: "DebianPackageTests: %@ took %.1f s", step, Date().timeIntervalSince(start))) }
        return try body()
    }
}
