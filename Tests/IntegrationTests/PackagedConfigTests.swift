import Foundation
import Testing

/// Issue #17: the commented /etc/uploader/uploader.conf the package ships
/// (packaging/deb/uploader.conf) starts nothing by itself, its settings are valid once
/// uncommented, and the unit lets the daemon write to the spools it suggests.
@Suite struct PackagedConfigTests {
    static let conffile = PackagePaths.root + "/packaging/deb/uploader.conf"
    static let unit = PackagePaths.root + "/examples/systemd/uploader.service"

    @Test func shippedConfigHasNoProfileSoCheckConfigSaysWhatIsMissing() throws {
        let result = try UploaderBinary().run(["check-config", "--config", Self.conffile])
        #expect(result.exitCode == 78, "\(result)")
        #expect(result.stderr.contains("no [outbox NAME] section"), "\(result.stderr)")
    }

    @Test func everyCommentedSettingIsValidOnceUncommented() throws {
        let tmp = try TempDir()
        try tmp.write("etc/photos.token", "t0ken\n")
        let text = try Self.uncommented()
            .replacingOccurrences(of: "/etc/uploader/", with: tmp.path("etc/"))
            .replacingOccurrences(of: "/var/spool/uploader/", with: tmp.path("spool/"))
            .replacingOccurrences(of: "/var/lib/uploader/", with: tmp.path("lib/"))
            // The package makes the drop group; this machine may not have it.
            .replacingOccurrences(of: "producers = uploader-drop", with: "producers = root")
        let config = try tmp.write("uploader.conf", text)
        let result = try UploaderBinary().run(["check-config", "--config", config])
        #expect(result.exitCode == 0, "\(result)")
        #expect(result.stdout.contains("[outbox photos]"), "\(result.stdout)")
    }

    @Test func unitRunsThePackagedBinaryOnTheConffileAndMayWriteItsSpools() throws {
        let unit = try String(contentsOfFile: Self.unit, encoding: .utf8)
        let lines = unit.split(separator: "\n").map(String.init)
        #expect(lines.contains("ExecStart=/usr/bin/uploader run --config /etc/uploader/uploader.conf"))
        let writable = lines.filter { $0.hasPrefix("ReadWritePaths=") }.flatMap {
            $0.dropFirst("ReadWritePaths=".count).split(separator: " ").map(String.init)
        }
        let spools = try Self.uncommented().split(separator: "\n").compactMap { line -> String? in
            guard line.hasPrefix("spool") else { return nil }
            return line.split(separator: "=")[1].split(separator: ";")[0].trimmingCharacters(in: .whitespaces)
        }
        #expect(!spools.isEmpty)
        for spool in spools {
            #expect(writable.contains { spool == $0 || spool.hasPrefix($0 + "/") }, "\(spool) not under ReadWritePaths= \(writable)")
        }
    }

    /// The conffile with every `;setting` line turned on.
    static func uncommented() throws -> String {
        try String(contentsOfFile: conffile, encoding: .utf8).split(separator: "\n", omittingEmptySubsequences: false)
            .map { $0.hasPrefix(";") ? String($0.dropFirst()) : String($0) }
            .joined(separator: "\n")
    }
}
