import Testing
@testable import UploaderSupport
@testable import UploaderConfig
@testable import UploaderSpool
@testable import UploaderTransfer
@testable import UploaderWatch
@testable import UploaderCore
@testable import UploaderDaemon
@testable import UploaderCommands

@Suite struct ConfigEffectiveTextTests {
    @Test func everyKeyIsPrintedWithItsDefaultInConfigSyntax() throws {
        let config = try #require(ConfigFixture.config(ConfigFixture.minimal))
        let text = effectiveConfigText(config)
        for line in ["[uploader]", "log_level = info", "metrics_file = ", "[outbox photos]",
                     "outbox = /var/spool/uploader/photos/outbox", "url = https://upload.example.com/photos/{path}",
                     "method = PUT", "auth = none", "connect_timeout = 10s", "stall_timeout = 1m", "timeout = 0",
                     "max_backoff = 1h", "max_rate = 0", "recursive = no",
                     "ignore = *.tmp *.part *.partial *.crdownload *~ *.swp", "hook_timeout = 30s"] {
            #expect(text.contains("\n" + line + "\n") || text.hasPrefix(line + "\n"), "missing \(line)")
        }
        let keys = Set(text.split(separator: "\n").compactMap { $0.split(separator: " ").first.map(String.init) })
        // Keys of other auth modes and destinations, and tus_chunk_size (printed with protocol = tus only).
        let elsewhere = ["token", "token_file", "username", "password", "password_file", "tus_chunk_size"] + S3Settings.keys
            + RemoteFileSettings.keys
        for key in ConfigKeys.global + ConfigKeys.outbox where !elsewhere.contains(key) {
            #expect(keys.contains(key), "effective config lacks \(key)")
        }
    }

    @Test func secretsAndCredentialHeadersAreRedacted() throws {
        let text = ConfigFixture.profile("""
            auth = bearer
            token = ${TOKEN}
            header.authorization = Bearer ${TOKEN}
            header.COOKIE = session=${TOKEN}
            header.Proxy-Authorization = Basic ${TOKEN}
            header.X-Site = north
            """)
        let config = try #require(ConfigFixture.config(text, env: ["TOKEN": "s3cr3t-t0ken"]))
        let printed = effectiveConfigText(config)
        #expect(!printed.contains("s3cr3t-t0ken"))
        #expect(printed.contains("\ntoken = <redacted>\n"))
        #expect(printed.contains("\nheader.authorization = <redacted>\n"))
        #expect(printed.contains("\nheader.COOKIE = <redacted>\n"))
        #expect(printed.contains("\nheader.Proxy-Authorization = <redacted>\n"))
        #expect(printed.contains("\nheader.X-Site = north\n"))
        #expect(Set(config.secretValues) == ["s3cr3t-t0ken", "Bearer s3cr3t-t0ken", "session=s3cr3t-t0ken", "Basic s3cr3t-t0ken"])
    }

    @Test func secretFilesShowTheirPathsNotTheirContents() throws {
        let dir = try TemporaryDirectory()
        try dir.write("pw", "pa55word\n")
        let text = ConfigFixture.profile("auth = basic\nusername = cam7\npassword_file = pw")
        let config = try #require(ConfigFixture.config(text, path: dir.path + "/uploader.conf"))
        let printed = effectiveConfigText(config)
        #expect(printed.contains("\npassword_file = \(dir.path)/pw\n") && printed.contains("\nusername = cam7\n"))
        #expect(!printed.contains("pa55word"))
    }

    @Test func theEffectiveTextReadsBackToTheSameConfiguration() throws {
        let text = ConfigFixture.profile(#"""
            form.note = "a ; b # c \"q\" \\ end"
            header.X-Path = {path}
            ignore = *.tmp
            max_rate = 1500
            keep_sent = 36h
            """#)
        let first = effectiveConfigText(try #require(ConfigFixture.config(text)))
        let second = effectiveConfigText(try #require(ConfigFixture.config(first)))
        #expect(first == second)
        #expect(first.contains(#"form.note = "a ; b # c \"q\" \\ end""#))
        #expect(first.contains("keep_sent = 36h") && first.contains("max_rate = 1500"))
    }
}
