import Foundation
import Testing
@testable import UploaderSupport
@testable import UploaderConfig
@testable import UploaderSpool
@testable import UploaderTransfer
@testable import UploaderWatch
@testable import UploaderCore
@testable import UploaderDaemon
@testable import UploaderCommands

/// Helpers shared by the config suites: parse text, get the config or the error lines.
enum ConfigFixture {
    static let path = "/nonexistent-uploader-test/uploader.conf"

    static let minimal = """
        [outbox photos]
        spool = /var/spool/uploader/photos
        url = https://upload.example.com/photos/{path}
        """

    /// No service user but root: the access checks then see only the config's own files, whatever
    /// users this machine has (a package test may add `uploader` while these run).
    static let noServiceUser: @Sendable ([String]) -> LocalUser? = { _ in nil }

    static func parse(_ text: String, env: [String: String] = [:], path: String = path) -> Result<LoadedConfiguration, ConfigErrors> {
        ConfigLoader.parse(text: text, path: path, environment: env, serviceUser: noServiceUser)
    }

    /// The configuration, recording a test failure (with the errors) if it did not load.
    static func config(_ text: String, env: [String: String] = [:], path: String = path,
                       sourceLocation: SourceLocation = #_sourceLocation) -> Configuration? {
        switch parse(text, env: env, path: path) {
        case .success(let loaded): return loaded.configuration
        case .failure(let errors):
            Issue.record("unexpected config errors:\n\(errors)", sourceLocation: sourceLocation)
            return nil
        }
    }

    /// The error lines (`PATH:LINE: message`), empty if the config loaded.
    static func errors(_ text: String, env: [String: String] = [:], path: String = path) -> [String] {
        switch parse(text, env: env, path: path) {
        case .success: return []
        case .failure(let errors): return errors.errors.map(\.description)
        }
    }

    /// `[outbox photos]` with the minimal keys plus `extra` lines.
    static func profile(_ extra: String) -> String { minimal + "\n" + extra + "\n" }
}

/// A fresh temporary directory, removed when the test ends.
final class TemporaryDirectory {
    let path: String

    init() throws {
        path = FileManager.default.temporaryDirectory.path + "/uploader-config-test-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(atPath: path) }

    @discardableResult
    func write(_ name: String, _ text: String, mode: Int = 0o600) throws -> String {
        let file = path + "/" + name
        try Data(text.utf8).write(to: URL(fileURLWithPath: file))
        try FileManager.default.setAttributes([.posixPermissions: mode], ofItemAtPath: file)
        return file
    }
}
