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

/// `protocol = tus` and `tus_chunk_size`: defaults, what check-config prints, and the
/// `PATH:LINE:` errors for keys that do not fit the protocol.
@Suite struct TusConfigTests {
    let path = ConfigFixture.path

    @Test func theDefaultProtocolIsHTTPAndTusChunksAreEightMebibytes() throws {
        let http = try #require(ConfigFixture.config(ConfigFixture.minimal)?.profiles.first)
        #expect(http.uploadProtocol == .http)
        let tus = try #require(ConfigFixture.config(ConfigFixture.profile("protocol = tus"))?.profiles.first)
        #expect(tus.uploadProtocol == .tus && tus.tusChunkSize == 8 << 20)
        let small = try #require(ConfigFixture.config(ConfigFixture.profile("protocol = tus\ntus_chunk_size = 1MiB"))?.profiles.first)
        #expect(small.tusChunkSize == 1 << 20)
    }

    @Test func checkConfigPrintsTheProtocolAndTheTusChunkSize() throws {
        let config = try #require(ConfigFixture.config(ConfigFixture.profile("protocol = tus\ntus_chunk_size = 4MiB")))
        let text = effectiveConfigText(config)
        #expect(text.contains("protocol = tus\ntus_chunk_size = 4MiB\n"), "\(text)")
        #expect(!text.contains("method =") && !text.contains("body ="), "tus fixes method and body: \(text)")
        let http = effectiveConfigText(try #require(ConfigFixture.config(ConfigFixture.minimal)))
        #expect(http.contains("protocol = http\nmethod = PUT\n") && !http.contains("tus_chunk_size"), "\(http)")
    }

    @Test func anUnknownProtocolIsAnErrorOnItsLine() {
        #expect(ConfigFixture.errors(ConfigFixture.profile("protocol = tusd")).first?
            .hasPrefix("\(path):4: invalid value \"tusd\" for protocol") == true)
    }

    @Test func aChunkSizeOutOfRangeIsAnError() {
        #expect(ConfigFixture.errors(ConfigFixture.profile("protocol = tus\ntus_chunk_size = 1KiB"))
            == ["\(path):5: tus_chunk_size must be from 64KiB to 4GiB"])
        #expect(ConfigFixture.errors(ConfigFixture.profile("protocol = tus\ntus_chunk_size = lots")).first?
            .hasPrefix("\(path):5: invalid size \"lots\" for tus_chunk_size") == true)
    }

    @Test func aChunkSizeWithoutTusIsAnError() {
        #expect(ConfigFixture.errors(ConfigFixture.profile("tus_chunk_size = 1MiB"))
            == ["\(path):4: tus_chunk_size is set but protocol is http; it is only used with protocol = tus"])
    }

    @Test func methodBodyFormFieldsAndProtocolHeadersDoNotGoWithTus() {
        let errors = ConfigFixture.errors(ConfigFixture.profile("""
            protocol = tus
            method = POST
            body = multipart
            form.site = north
            header.Upload-Offset = 0
            header.X-Site = north
            """))
        #expect(errors == [
            "\(path):5: method is not used with protocol = tus (tus creates with POST and sends the file's bytes in PATCHes)",
            "\(path):6: body is not used with protocol = tus (tus creates with POST and sends the file's bytes in PATCHes)",
            "\(path):7: form.site is not used with protocol = tus",
            "\(path):8: header.Upload-Offset cannot be set with protocol = tus: uploader sets Upload-Offset itself",
        ], "\(errors)")
    }

    @Test func tusDoesNotGoWithAnS3URL() {
        let errors = ConfigFixture.errors(S3ConfigTests.section("protocol = tus"), env: S3ConfigTests.env)
        #expect(errors == ["\(path):6: protocol must be http (or left out) with s3:// urls"], "\(errors)")
    }
}
