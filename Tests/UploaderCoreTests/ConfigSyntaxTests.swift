import Testing
@testable import UploaderSupport
@testable import UploaderConfig
@testable import UploaderSpool
@testable import UploaderTransfer
@testable import UploaderWatch
@testable import UploaderCore
@testable import UploaderDaemon
@testable import UploaderCommands

@Suite struct ConfigSyntaxTests {
    private let path = ConfigFixture.path

    @Test func commentsStartAtLineStartOrAfterWhitespace() {
        let config = ConfigFixture.config("""
            # a comment
            ; another
            [outbox photos]   ; trailing comment on a header
            spool = /srv/spool ; comment
            url = https://h.example/a#b/{path}   # the first # has no space before it, so it stays
            form.note = x;y # ";" without a space before it stays too
            """)
        let profile = config?.profiles.first
        #expect(profile?.spool.root == "/srv/spool")
        if case .http(let url)? = profile?.destination { #expect(url.description == "https://h.example/a#b/{path}") }
        #expect(profile?.formFields.first?.value.source == "x;y")
    }

    @Test func quotedValuesKeepCommentCharactersAndUnescapeQuotesAndBackslashes() {
        let config = ConfigFixture.config(ConfigFixture.profile(#"""
            form.a = "a ; b # c"  ; real comment
            form.b = "say \"hi\" \\ bye"
            form.c = "  padded  "
            form.d = "costs \${{HOME}}"
            """#))
        let fields = config?.profiles.first?.formFields.map(\.value.source)
        #expect(fields == ["a ; b # c", #"say "hi" \ bye"#, "  padded  ", "costs ${{HOME}}"])
    }

    @Test func anUnterminatedQuoteIsAnErrorOnItsLine() {
        #expect(ConfigFixture.errors(ConfigFixture.profile(#"form.a = "open"#)) ==
            ["\(path):4: unterminated quoted value for form.a (a closing \" is missing)"])
    }

    @Test func textAfterAClosingQuoteIsAnError() {
        #expect(ConfigFixture.errors(ConfigFixture.profile(#"form.a = "x" y"#)) ==
            ["\(path):4: unexpected text after the closing quote of form.a"])
    }

    @Test func variablesExpandFromTheGivenEnvironment() {
        let config = ConfigFixture.config("""
            [outbox photos]
            spool = ${SPOOL}/photos
            url = "https://${HOST}/up/{path}"
            """, env: ["SPOOL": "/data", "HOST": "files.example"])
        #expect(config?.profiles.first?.spool.root == "/data/photos")
        if case .http(let url)? = config?.profiles.first?.destination { #expect(url.description == "https://files.example/up/{path}") }
    }

    @Test func anUnsetVariableIsAnErrorNamingItAndTheKey() {
        #expect(ConfigFixture.errors(ConfigFixture.profile("form.a = ${NOPE}")) ==
            ["\(path):4: environment variable NOPE is not set (used by form.a)"])
    }

    @Test func anUnterminatedVariableIsAnError() {
        #expect(ConfigFixture.errors(ConfigFixture.profile("form.a = ${NOPE")) ==
            ["\(path):4: unterminated \"${\" in the value of form.a (a closing } is missing)"])
    }

    @Test func aLineWithoutEqualsIsAnError() {
        #expect(ConfigFixture.errors(ConfigFixture.profile("concurrency 4")) ==
            ["\(path):4: expected \"key = value\", a [section] header or a comment"])
    }

    @Test func keysBeforeAnySectionAreAnError() {
        #expect(ConfigFixture.errors("concurrency = 4\n" + ConfigFixture.minimal).first ==
            "\(path):1: key \"concurrency\" is outside any section; start with [uploader] or [outbox NAME]")
    }

    @Test func aDuplicateKeyIsAnErrorNamingTheFirstLine() {
        #expect(ConfigFixture.errors(ConfigFixture.profile("concurrency = 2\nconcurrency = 3")) ==
            ["\(path):5: duplicate key \"concurrency\" in [outbox photos] (first set on line 4)"])
    }

    @Test func crlfLineEndingsAndAByteOrderMarkAreAccepted() {
        let text = "\u{FEFF}" + ConfigFixture.minimal.replacingOccurrences(of: "\n", with: "\r\n") + "\r\n"
        #expect(ConfigFixture.config(text)?.profiles.count == 1)
    }

    @Test func controlCharactersInAValueAreAnError() {
        #expect(ConfigFixture.errors(ConfigFixture.profile("form.a = x\u{0}y")) ==
            ["\(path):4: the value of form.a contains a control character"])
    }

    @Test func keysAndValuesNeedNoSpacesAroundEquals() {
        let config = ConfigFixture.config("[outbox p]\nspool=/s\nurl=http://h/{name}?a=b\nform.x=#y")
        #expect(config?.profiles.first?.spool.root == "/s")
        #expect(config?.profiles.first?.formFields.first?.value.source == "#y")
    }

    @Test func keyTyposInTheWrongCaseStillGetASuggestion() {
        #expect(ConfigFixture.errors(ConfigFixture.profile("URL = http://h/")) ==
            ["\(path):4: unknown key \"URL\" in [outbox photos]; did you mean \"url\"?"])
    }
}
