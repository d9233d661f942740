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

@Suite("An unknown placeholder anywhere templates are accepted is a config error with its line")
struct TemplateConfigTests {
    private let path = ConfigFixture.path

    @Test func unknownPlaceholdersInUrlFormAndHeaderAreEachReportedOnTheirOwnLine() {
        let text = """
            [outbox photos]
            spool = /s
            url = https://h.example/{nmae}
            body = multipart
            form.device = {hostnme}
            form.fine = {hostname}-{id}
            header.X-Trace = {sha265}
            header.X-Fine = {profile}
            """
        #expect(ConfigFixture.errors(text) == [
            "\(path):3: unknown placeholder {nmae} in url; did you mean {name}?",
            "\(path):5: unknown placeholder {hostnme} in form.device; did you mean {hostname}?",
            "\(path):7: unknown placeholder {sha265} in header.X-Trace; did you mean {sha256}?",
        ])
    }

    @Test func aSensitiveHeaderWithABadPlaceholderIsReportedWithoutItsValue() {
        let errors = ConfigFixture.errors(ConfigFixture.profile("header.Authorization = Token s3cr3t-{tokn}"))
        #expect(errors.count == 1)
        #expect(errors.first?.hasPrefix("\(path):4: unknown placeholder in header.Authorization (value redacted") ?? false)
        #expect(!(errors.first?.contains("s3cr3t") ?? true))
    }

    @Test func everyKnownPlaceholderIsAcceptedInEveryTemplatedKey() {
        let all = Template.Placeholder.allCases.map { "{\($0.rawValue)}" }.joined(separator: "-")
        let config = ConfigFixture.config("""
            [outbox photos]
            spool = /s
            url = https://h.example/x/\(all)
            body = json
            form.all = \(all)
            header.X-All = \(all)
            """)
        #expect(config?.profiles.first?.formFields.first?.value.placeholders == Template.Placeholder.allCases)
        #expect(config?.profiles.first?.headers.first?.value.placeholders == Template.Placeholder.allCases)
    }
}
