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

@Suite struct ConfigLoaderTests {
    private let path = ConfigFixture.path

    @Test func aMinimalProfileGetsEveryDefault() throws {
        let config = try #require(ConfigFixture.config(ConfigFixture.minimal))
        #expect(config.global == GlobalSettings())
        let p = try #require(config.profiles.first)
        #expect(p.name == "photos" && p.line == 1)
        #expect(p.spool == SpoolPaths(root: "/var/spool/uploader/photos"))
        #expect(p.method == .put && p.body == .raw && p.multipartField == "file")
        #expect(p.concurrency == 4 && p.maxAttempts == 10 && p.digest == .sha256)
        #expect(p.connectTimeout == 10 && p.stallTimeout == 60 && p.timeout == 0)
        #expect(p.backoff == 30 && p.maxBackoff == 3600 && p.maxRate == .constant(0))
        #expect(p.ignore == Profile.defaultIgnore && !p.recursive)
        #expect(p.shutdownGrace == 30 && p.hookTimeout == 30 && p.onSent == nil)
        if case .none = p.auth {} else { Issue.record("auth should default to none") }
    }

    @Test func everyKeyIsReadIntoItsTypedField() throws {
        let dir = try TemporaryDirectory()
        try dir.write("ca.pem", "x")
        try dir.write("hook.sh", "#!/bin/sh\n", mode: 0o755)
        let text = """
            [uploader]
            log_level = debug
            log_format = json
            metrics_file = metrics/uploader.prom

            [outbox photos]
            spool = spool/photos
            outbox = spool/photos/in
            sent = spool/photos/done
            retry = /abs/retry
            url = https://upload.example.com:8443/photos/{date}/{path}?sum={sha256}
            method = post
            body = multipart
            multipart_field = upload
            form.device = cam-{hostname}
            header.X-Site = north
            auth = basic
            username = cam7
            password = ${PW}
            ca_file = ca.pem
            insecure_skip_verify = yes
            concurrency = 8
            connect_timeout = 5s
            stall_timeout = 2m
            timeout = 1h
            max_attempts = 3
            digest = none
            backoff = 10s
            max_backoff = 30m
            max_rate = 10MiB
            recursive = on
            ignore = *.tmp .~lock*
            rescan = 5m
            keep_sent = 7d
            shutdown_grace = 0
            on_sent = ./hook.sh
            on_failed = logger
            hook_timeout = 250ms
            """
        let config = try #require(ConfigFixture.config(text, env: ["PW": "hunter2"], path: dir.path + "/uploader.conf"))
        #expect(config.global.logLevel == .debug && config.global.logFormat == .json)
        #expect(config.global.metricsFile == dir.path + "/metrics/uploader.prom")
        let p = try #require(config.profiles.first)
        #expect(p.spool == SpoolPaths(root: dir.path + "/spool/photos", outbox: dir.path + "/spool/photos/in",
                                      sent: dir.path + "/spool/photos/done", retry: "/abs/retry"))
        #expect(p.method == .post && p.body == .multipart && p.multipartField == "upload")
        #expect(p.formFields.map(\.name) == ["device"] && p.formFields.first?.value.placeholders == [.hostname])
        #expect(p.headers.map(\.name) == ["X-Site"])
        guard case .basic("cam7", let password) = p.auth else { Issue.record("expected basic auth"); return }
        #expect(password.value == "hunter2" && password.file == nil)
        #expect(p.tls.caFile == dir.path + "/ca.pem" && p.tls.insecureSkipVerify)
        #expect(p.concurrency == 8 && p.connectTimeout == 5 && p.stallTimeout == 120 && p.timeout == 3600)
        #expect(p.maxAttempts == 3 && p.digest == .none && p.backoff == 10 && p.maxBackoff == 1800)
        #expect(p.maxRate == .constant(10 << 20) && p.recursive && p.ignore == ["*.tmp", ".~lock*"])
        #expect(p.rescan == 300 && p.keepSent == 604_800 && p.shutdownGrace == 0 && p.hookTimeout == 0.25)
        #expect(p.onSent == dir.path + "/hook.sh" && p.onFailed == "logger")
        #expect(config.secretValues == ["hunter2", "Y2FtNzpodW50ZXIy"], "the password and the base64 form the header carries")
    }

    @Test func severalProfilesKeepTheirOrder() {
        let config = ConfigFixture.config(ConfigFixture.minimal + """

            [outbox docs]
            spool = /var/spool/uploader/docs
            url = http://10.0.0.2:8080/{name}
            """)
        #expect(config?.profiles.map(\.name) == ["photos", "docs"])
        #expect(config?.profiles.last?.line == 4)
    }

    @Test func anUnknownKeySuggestsTheNearestKnownOneWithItsLine() {
        let text = ConfigFixture.profile("\n\n\n\n\n\n\n\nconcurency = 4")
        #expect(ConfigFixture.errors(text, path: "uploader.conf") ==
            ["uploader.conf:12: unknown key \"concurency\" in [outbox photos]; did you mean \"concurrency\"?"])
    }

    @Test func anUnknownKeyInUploaderSaysWhereItBelongs() {
        #expect(ConfigFixture.errors("[uploader]\nconcurrency = 3\n" + ConfigFixture.minimal) ==
            ["\(path):2: unknown key \"concurrency\" in [uploader]; it belongs in an [outbox NAME] section"])
    }

    @Test func everyErrorIsReportedNotJustTheFirst() {
        let errors = ConfigFixture.errors(ConfigFixture.profile("colour = red\nbackof = 3s\nmethod = GET"))
        #expect(errors.count == 3)
        #expect(errors[1] == "\(path):5: unknown key \"backof\" in [outbox photos]; did you mean \"backoff\"?")
    }

    @Test func anUnknownSectionIsAnErrorWithASuggestion() {
        #expect(ConfigFixture.errors("[outbx photos]\nspool = /x\n" + ConfigFixture.minimal) ==
            ["\(path):1: unknown section [outbx photos]; did you mean [outbox photos]?"])
        #expect(ConfigFixture.errors("[mail]\n" + ConfigFixture.minimal) ==
            ["\(path):1: unknown section [mail] (use [uploader] or [outbox NAME])"])
    }

    @Test func aDuplicateProfileIsAnError() {
        #expect(ConfigFixture.errors(ConfigFixture.minimal + "\n" + ConfigFixture.minimal) ==
            ["\(path):4: duplicate profile [outbox photos] (first on line 1)"])
    }

    @Test func missingUrlAndSpoolAreReportedAtTheSectionHeader() {
        #expect(ConfigFixture.errors("[uploader]\n\n[outbox photos]\nconcurrency = 2\n") == [
            "\(path):3: missing required key \"spool\" in [outbox photos]",
            "\(path):3: missing required key \"url\" in [outbox photos]",
        ])
    }

    @Test func aConfigWithoutProfilesIsAnError() {
        #expect(ConfigFixture.errors("[uploader]\nlog_level = warn\n") == ["\(path): no [outbox NAME] section: nothing to upload"])
    }

    @Test func anUnknownPlaceholderInTheUrlIsReportedWithItsLine() {
        let text = "[outbox photos]\nspool = /s\n\nurl = https://h.example/{pth}\n"
        #expect(ConfigFixture.errors(text) == ["\(path):4: unknown placeholder {pth} in url; did you mean {path}?"])
    }

    @Test func urlsMustBeHttpWithAHostAndNoCredentials() {
        func error(_ url: String) -> String? {
            ConfigFixture.errors("[outbox p]\nspool = /s\nurl = \(url)\n").first
        }
        #expect(error("gopher://h/x") == "\(path):3: url must start with http://, https://, s3://, sftp://, ftps:// or ftp://")
        #expect(error("ftp://h/x") == "\(path):3: url needs the login's user name (ftp://USER@HOST/…)")
        #expect(error("https:///x") == "\(path):3: url has no host")
        #expect(error("https://user:secret@h/x") == "\(path):3: url must not contain a user name or password; use auth = basic or bearer")
        #expect(error("https://{hostname}/x") == "\(path):3: url's host and port cannot contain placeholders")
        #expect(error("https://h:99999/x") == "\(path):3: url has an invalid port (use 1 to 65535)")
        #expect(error("https://[::1]:8080/{path}") == nil)
    }

    @Test func relativePathsResolveAgainstTheConfigDirectory() {
        let config = ConfigFixture.config("[outbox p]\nspool = ./data//p/\nsent = ../elsewhere/sent\nurl = http://h/\n", path: "/etc/uploader/uploader.conf")
        #expect(config?.profiles.first?.spool.root == "/etc/uploader/data/p")
        #expect(config?.profiles.first?.spool.outbox == "/etc/uploader/data/p/outbox")
        #expect(config?.profiles.first?.spool.sent == "/etc/uploader/../elsewhere/sent")
    }

    @Test func aRelativeConfigPathResolvesAgainstTheWorkingDirectory() {
        let config = ConfigFixture.config("[outbox p]\nspool = data\nurl = http://h/\n", path: "uploader.conf")
        #expect(config?.profiles.first?.spool.root == FileManager.default.currentDirectoryPath + "/data")
    }

    @Test func aTokenFileIsReadWithOneTrailingNewlineStripped() throws {
        let dir = try TemporaryDirectory()
        try dir.write("photos.token", "xyz\n")
        let text = ConfigFixture.profile("auth = bearer\ntoken_file = photos.token")
        let config = try #require(ConfigFixture.config(text, path: dir.path + "/uploader.conf"))
        guard case .bearer(let token) = config.profiles.first?.auth else { Issue.record("expected bearer"); return }
        #expect(token.value == "xyz" && token.file == dir.path + "/photos.token")
    }

    @Test func aSecretFileWithALineBreakInsideIsRefusedWithoutShowingIt() throws {
        let dir = try TemporaryDirectory()
        let file = try dir.write("photos.token", "abc123\n\n")
        let errors = ConfigFixture.errors(ConfigFixture.profile("auth = bearer\ntoken_file = photos.token"), path: dir.path + "/uploader.conf")
        #expect(errors == ["\(dir.path)/uploader.conf:5: token_file \(file) holds a line break or control character inside the secret"])
    }

    @Test func anUnreadableSecretFileIsAnErrorWithTheOSReason() {
        let text = ConfigFixture.profile("auth = basic\nusername = u\npassword_file = /nonexistent-uploader-test/pw")
        #expect(ConfigFixture.errors(text) ==
            ["\(path):6: cannot read password_file /nonexistent-uploader-test/pw: No such file or directory"])
    }

    @Test func bearerWithoutATokenAndBasicWithoutAPasswordAreErrors() {
        #expect(ConfigFixture.errors(ConfigFixture.profile("auth = bearer")) ==
            ["\(path):4: auth = bearer needs token or token_file in [outbox photos]"])
        #expect(ConfigFixture.errors(ConfigFixture.profile("auth = basic\nusername = u")) ==
            ["\(path):4: auth = basic needs password or password_file in [outbox photos]"])
        #expect(ConfigFixture.errors(ConfigFixture.profile("token = abc")) ==
            ["\(path):4: token is set but auth is none; it is only used with auth = bearer"])
    }

    @Test func credentialHeadersAreAllowed() {
        let config = ConfigFixture.config(ConfigFixture.profile("header.Authorization = Bearer ${T}"), env: ["T": "tok-1"])
        #expect(config?.profiles.first?.headers.first?.name == "Authorization")
        #expect(config?.secretValues == ["Bearer tok-1"])
    }

    @Test func secretsNeverAppearInErrorMessages() {
        let text = ConfigFixture.profile("auth = none\ntoken = ${T}\nheader.Cookie = s={T${T}}\nurl2 = x")
        let errors = ConfigFixture.errors(text, env: ["T": "topsecret"])
        #expect(!errors.isEmpty)
        #expect(!errors.joined().contains("topsecret"))
    }

    @Test func aVariableExpandedIntoAnInvalidValueIsShownAsWrittenNotExpanded() {
        let errors = ConfigFixture.errors(ConfigFixture.profile("auth = ${T}\nconcurrency = x${T}"), env: ["T": "topsecret"])
        #expect(errors.count == 2)
        #expect(errors.contains { $0.contains("invalid value \"${T}\" for auth") }, "\(errors)")
        #expect(errors.contains { $0.contains("invalid number \"x${T}\" for concurrency") }, "\(errors)")
        #expect(!errors.joined().contains("topsecret"))
    }

    @Test func aWorldReadableConfigWithASecretAsWrittenGetsAWarningButNotOneWithAVariable() throws {
        let dir = try TemporaryDirectory()
        let written = ConfigFixture.profile("auth = bearer\ntoken = s3cr3t")
        let open = try dir.write("open.conf", written, mode: 0o644)
        let closed = try dir.write("closed.conf", written, mode: 0o600)
        let variable = try dir.write("variable.conf", ConfigFixture.profile("auth = bearer\ntoken = ${T}"), mode: 0o644)
        let warnings = try ConfigLoader.load(path: open, environment: [:], serviceUser: ConfigFixture.noServiceUser).get().warnings
        #expect(warnings.count == 1, "\(warnings)")
        #expect(warnings.first?.hasPrefix("\(open): warning: holds a secret as written (token on line 5) and \(open) is readable by every user (mode 0644, ") == true,
                "\(warnings)")
        #expect(warnings.first?.contains("or move it to token_file or ${VAR}") == true, "\(warnings)")
        #expect(!warnings.joined().contains("s3cr3t"))
        #expect(try ConfigLoader.load(path: closed, environment: [:], serviceUser: ConfigFixture.noServiceUser).get().warnings.isEmpty)
        #expect(try ConfigLoader.load(path: variable, environment: ["T": "x"], serviceUser: ConfigFixture.noServiceUser).get().warnings.isEmpty)
    }

    @Test func aRelativeSecretFileIsLookedUpInTheCredentialsDirectoryFirst() throws {
        let dir = try TemporaryDirectory()
        try FileManager.default.createDirectory(atPath: dir.path + "/credentials", withIntermediateDirectories: true)
        try dir.write("credentials/photos.token", "from-systemd\n")
        try dir.write("photos.token", "beside-the-config\n")
        try dir.write("other.token", "only-beside\n")
        let config = try dir.write("u.conf", ConfigFixture.profile("auth = bearer\ntoken_file = photos.token"))
        let loaded = try ConfigLoader.load(path: config, environment: ["CREDENTIALS_DIRECTORY": dir.path + "/credentials"]).get()
        #expect(loaded.configuration.profiles.first?.secretValues == ["from-systemd"])
        #expect(loaded.configuration.profiles.first?.credentialFiles == [dir.path + "/credentials/photos.token"])
        let beside = try ConfigLoader.load(path: config, environment: [:]).get()
        #expect(beside.configuration.profiles.first?.secretValues == ["beside-the-config"])
        let other = try dir.write("o.conf", ConfigFixture.profile("auth = bearer\ntoken_file = other.token"))
        let fallback = try ConfigLoader.load(path: other, environment: ["CREDENTIALS_DIRECTORY": dir.path + "/credentials"]).get()
        #expect(fallback.configuration.profiles.first?.secretValues == ["only-beside"], "not in the credentials: beside the config")
    }

    @Test func aMissingConfigFileIsOneFileLevelError() {
        guard case .failure(let errors) = ConfigLoader.load(path: "/nonexistent-uploader-test/u.conf", environment: [:]) else {
            Issue.record("expected failure"); return
        }
        #expect(errors.description == "/nonexistent-uploader-test/u.conf: cannot read config: No such file or directory")
    }

    @Test func sentOnAnotherFilesystemThanTheOutboxIsAnError() throws {
        var tmp = stat(), proc = stat()
        guard stat("/tmp", &tmp) == 0, stat("/proc", &proc) == 0, tmp.st_dev != proc.st_dev else { return }
        let text = "[outbox p]\nspool = /tmp/uploader-test-spool\nsent = /proc/uploader-test-sent\nurl = http://h/\n"
        #expect(ConfigFixture.errors(text) == [
            "\(path):3: sent directory /proc/uploader-test-sent of [outbox p] is on a different filesystem than its outbox /tmp/uploader-test-spool/outbox; files are moved by rename, so they must share one",
        ])
    }

    @Test func twoProfilesCannotShareASpool() {
        let text = ConfigFixture.minimal + "\n[outbox again]\nspool = /var/spool/uploader/photos\nurl = http://h/\n"
        #expect(ConfigFixture.errors(text) ==
            ["\(path):4: [outbox again] uses the same spool as [outbox photos] (line 1): /var/spool/uploader/photos"])
    }
}
