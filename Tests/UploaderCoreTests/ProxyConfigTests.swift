import Foundation
import Testing
@testable import UploaderSupport
@testable import UploaderConfig
@testable import UploaderTransfer

/// The `proxy` key, the environment variables libcurl reads, and where requests and probes go.
@Suite struct ProxyConfigTests {
    private func profile(_ extra: String, env: [String: String] = [:]) throws -> Profile {
        try #require(ConfigFixture.config(ConfigFixture.profile(extra), env: env)?.profiles.first)
    }

    @Test func everySchemeLibcurlTakesIsAccepted() throws {
        for url in ["http://10.0.0.1:3128", "https://proxy.example:8443", "socks4://127.0.0.1:1080", "socks4a://127.0.0.1:1080",
                    "socks5://127.0.0.1:1080", "SOCKS5H://127.0.0.1:1080", "http://[::1]:3128/", "http://127.0.0.1"] {
            #expect(try profile("proxy = \(url)").proxy?.text == url)
        }
        #expect(try profile("proxy = ").proxy == nil, "empty: libcurl's environment variables")
        #expect(try profile("").proxy == nil)
    }

    @Test func aBadProxyIsAPathLineErrorThatNeverQuotesIt() {
        let cases = [
            ("ftp://u:hunter2@127.0.0.1:21", "proxy must start with one of http://, https://, socks4://, socks4a://, socks5://, socks5h://"),
            ("127.0.0.1:3128", "proxy must start with one of"),
            ("http://u:hunter2@:3128", "proxy has no host"),
            ("http://u:hunter2@127.0.0.1:99999", "proxy has an invalid port (use 1 to 65535)"),
            ("http://u:hunter2@127.0.0.1:3128/path", "proxy must name only scheme, host and port (no path)"),
        ]
        for (value, message) in cases {
            let errors = ConfigFixture.errors(ConfigFixture.profile("proxy = \(value)"))
            #expect(errors.count == 1, "\(value): \(errors)")
            #expect(errors.first?.hasPrefix("\(ConfigFixture.path):4: \(message)") == true, "\(value): \(errors)")
            #expect(errors.first?.contains("hunter2") == false)
        }
    }

    @Test func credentialsInTheProxyAreRedactedInCheckConfigAndScrubbedFromLogs() throws {
        let config = try #require(ConfigFixture.config(ConfigFixture.profile("proxy = ${PROXY}"),
                                                       env: ["PROXY": "http://cam7:p%40ss-w0rd@127.0.0.1:3128"]))
        let printed = effectiveConfigText(config)
        #expect(printed.contains("\nproxy = http://<redacted>@127.0.0.1:3128\n"), "\(printed)")
        #expect(!printed.contains("w0rd") && !printed.contains("cam7"))
        let secrets = Set(config.secretValues)
        #expect(secrets.isSuperset(of: ["http://cam7:p%40ss-w0rd@127.0.0.1:3128", "cam7:p%40ss-w0rd", "p%40ss-w0rd", "p@ss-w0rd"]))

        let plain = try #require(ConfigFixture.config(ConfigFixture.profile("proxy = socks5h://127.0.0.1:1080")))
        #expect(effectiveConfigText(plain).contains("\nproxy = socks5h://127.0.0.1:1080\n"))
        #expect(plain.secretValues.isEmpty)
    }

    @Test func theProxyReachesEveryRequestPlainS3AndTus() throws {
        let file = try TestFile(Array("proxied".utf8))
        var http = try Fixture.profile(port: 8080)
        http.proxy = try ProxyURL.parse("http://127.0.0.1:3128").get()
        #expect(try Fixture.request(http, file).proxy == "http://127.0.0.1:3128")
        #expect(try Fixture.request(try Fixture.profile(port: 8080), file).proxy == nil, "no key: libcurl's environment")

        let s3Config = try #require(ConfigFixture.config("""
            [outbox cams]
            spool = /var/spool/uploader/cams
            url = s3://ingest/{path}
            s3_endpoint = http://127.0.0.1:9000
            s3_path_style = yes
            access_key_id = AKIDEXAMPLE
            secret_access_key = wJalrXUtnFEMI
            proxy = http://127.0.0.1:3128
            """))
        let s3 = try #require(s3Config.profiles.first)
        guard case .s3(let target) = s3.destination else { Issue.record("not s3"); return }
        let context = S3Requests.Context(key: Array("k".utf8), contentType: "text/plain", extraHeaders: [], rateLimiter: nil,
                                         cancellation: CancellationFlag(), sourcePath: nil)
        #expect(S3Requests(profile: s3, target: target, clock: SystemClock()).putObject(context, body: RequestBody([]), sha256: nil).proxy == "http://127.0.0.1:3128")

        var tus = try Fixture.profile(port: 8080, url: "/files/")
        tus.uploadProtocol = .tus
        tus.proxy = http.proxy
        let tusContext = TusRequests.Context(creationURL: "http://127.0.0.1:8080/files/", profileHeaders: [], rateLimiter: nil,
                                             cancellation: CancellationFlag(), sourcePath: nil)
        #expect(TusRequests(profile: tus).options(tusContext).proxy == "http://127.0.0.1:3128")
    }

    @Test func theEnvironmentIsReadAsLibcurlReadsIt() {
        func name(_ scheme: String, _ env: [String: String]) -> String? { ProxyEnvironment.variable(for: scheme, in: env)?.name }
        #expect(name("http", ["http_proxy": "http://a:1"]) == "http_proxy")
        #expect(name("http", ["HTTP_PROXY": "http://a:1"]) == nil, "never HTTP_PROXY")
        #expect(name("http", ["HTTP_PROXY": "http://a:1", "ALL_PROXY": "socks5://b:2"]) == "ALL_PROXY")
        #expect(name("https", ["HTTPS_PROXY": "http://a:1"]) == "HTTPS_PROXY")
        #expect(name("https", ["https_proxy": "http://a:1", "HTTPS_PROXY": "http://c:3"]) == "https_proxy")
        #expect(name("https", ["https_proxy": "", "all_proxy": "http://b:2"]) == "all_proxy", "empty counts as unset")
        #expect(name("https", ["http_proxy": "http://a:1"]) == nil, "http_proxy is for http:// only")
        #expect(name("http", [:]) == nil)
    }

    @Test func behindAProxyTheProbeIsARequestThroughItAndTheRouteIsTheProxys() throws {
        let direct = try profile("")
        let plain = ReachabilityPlan(profile: direct, environment: [:])
        #expect(plain.probe is TCPProbe)
        #expect(plain.routeHost == "upload.example.com")

        let keyed = ReachabilityPlan(profile: try profile("proxy = http://10.1.2.3:3128"), environment: [:])
        let probe = try #require(keyed.probe as? ProxyProbe)
        #expect(probe.url == "https://upload.example.com/" && probe.proxy == "http://10.1.2.3:3128")
        #expect(keyed.routeHost == "10.1.2.3")

        let fromEnvironment = ReachabilityPlan(profile: direct, environment: ["https_proxy": "10.9.9.9:8080"])
        let envProbe = try #require(fromEnvironment.probe as? ProxyProbe)
        #expect(envProbe.proxy == nil, "libcurl reads the environment itself")
        #expect(fromEnvironment.routeHost == "10.9.9.9")
        #expect(ReachabilityPlan(profile: direct, environment: ["http_proxy": "http://10.9.9.9:8080"]).probe is TCPProbe,
                "an https destination does not use http_proxy")
    }
}
