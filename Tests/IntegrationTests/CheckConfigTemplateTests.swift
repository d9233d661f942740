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

/// Issue #5: `uploader check-config` rejects an unknown placeholder in `url`, `form.*` or
/// `header.*` with exit 78 and one `PATH:LINE: message` per mistake.
final class CheckConfigTemplateTests: XCTestCase {
    func testUnknownPlaceholdersExitTwoWithTheLineOfEach() throws {
        let fx = try SpoolFixture(url: "https://up.example.test/in/{file}", extra: """
            body = multipart
            form.device = {host}
            header.X-Day = {today}
            header.X-Fine = {date}
            """, global: "log_level = info")
        let result = try fx.run(["check-config"])
        XCTAssertEqual(result.exitCode, 78, result.description)
        // SpoolFixture writes [uploader] (line 1), its setting (2), a blank (3), [outbox t] (4), spool (5), url (6), ...
        let known = "(known: {name} {path} {id} {sha256} {size} {date} {profile} {hostname})"
        XCTAssertEqual(result.stderr.split(separator: "\n").map(String.init), [
            "\(fx.config):6: unknown placeholder {file} in url \(known)",
            "\(fx.config):8: unknown placeholder {host} in form.device \(known)",
            "\(fx.config):9: unknown placeholder {today} in header.X-Day \(known)",
        ])
        XCTAssertEqual(result.stdout, "", "no effective config is printed for a broken file")
    }
}
