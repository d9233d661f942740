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

/// Issue #17: the man pages are generated from docs/ (packaging/man/mkman.py), and the
/// docs, the generated uploader.conf(5), the config parser's key list and what
/// `check-config` prints all name the same keys.
@Suite struct ManPageAgreementTests {
    /// Every key the parser accepts (`form.NAME`, `header.NAME` for the two families).
    static var parserKeys: Set<String> {
        Set(ConfigKeys.global + ConfigKeys.outbox + ConfigKeys.outboxPrefixes.map { $0 + "NAME" })
    }

    @Test func docsDocumentExactlyTheKeysTheParserAccepts() throws {
        let documented = try Self.keysInDocs()
        #expect(documented.subtracting(Self.parserKeys).sorted() == [], "documented in docs/ but unknown to ConfigKeys")
        #expect(Self.parserKeys.subtracting(documented).sorted() == [], "accepted by ConfigKeys but in no key table of docs/")
    }

    @Test func uploaderConf5DescribesEveryKeyTheParserAccepts() throws {
        let pages = try GeneratedManPages()
        let described = pages.tags(in: "uploader.conf.5")
        #expect(Self.parserKeys.subtracting(described).sorted() == [], "missing from uploader.conf(5)")
    }

    @Test func everyKeyCheckConfigPrintsIsInUploaderConf5() throws {
        let pages = try GeneratedManPages()
        let described = pages.tags(in: "uploader.conf.5")
        let tmp = try TempDir()
        for secret in ["token", "password", "secret", "session"] { try tmp.write(secret, "s3cr3t\n") }
        // One profile per kind of destination and credential, so every printed key shows up.
        let config = try tmp.write("uploader.conf", """
            [uploader]
            metrics_file = metrics.prom
            [outbox bearer]
            spool = spool/bearer
            url = https://example.com/{path}
            auth = bearer
            token_file = token
            header.X-Site = north
            [outbox basic]
            spool = spool/basic
            url = https://example.com/{path}
            body = multipart
            auth = basic
            username = u
            password_file = password
            form.note = {name}
            [outbox s3]
            spool = spool/s3
            url = s3://bucket/{path}
            s3_endpoint = https://minio.example.com:9000
            access_key_id = AKID
            secret_access_key_file = secret
            session_token_file = session

            """)
        let result = try UploaderBinary().run(["check-config", "--config", config])
        #expect(result.exitCode == 0, "\(result)")
        let printed = Set(result.stdout.split(separator: "\n").compactMap { line -> String? in
            guard let equals = line.range(of: " = ") ?? line.range(of: " =") else { return nil }
            let key = String(line[..<equals.lowerBound])
            guard let dot = key.firstIndex(of: ".") else { return key }
            return String(key[...dot]) + "NAME"
        })
        #expect(printed.count > 40, "check-config printed \(printed.count) keys: \(result.stdout)")
        #expect(printed.subtracting(described).sorted() == [], "printed by check-config but not in uploader.conf(5)")
    }

    @Test(arguments: ["uploader.1", "uploader.conf.5"])
    func manFormatsThePageWithoutWarnings(page: String) throws {
        let pages = try GeneratedManPages()
        // What lintian runs on every man page of a package.
        let result = try ProcessRunner.run(
            ["man", "--warnings", "-E", "UTF-8", "-l", "-Tutf8", "-Z", pages.path(page)],
            environment: ["LC_ALL": "C.UTF-8", "MANWIDTH": "80", "MANROFFSEQ": ""])
        #expect(result.exitCode == 0, "\(result)")
        #expect(result.stderr == "", "groff warnings for \(page)")
        #expect(result.stdout.count > 2000, "\(page) is nearly empty")
    }

    @Test func uploader1CoversEveryCommandAndExitCode() throws {
        let text = try GeneratedManPages().rendered("uploader.1")
        for command in ["uploader run", "uploader status", "uploader retry", "uploader enqueue", "uploader check-config"] {
            #expect(text.contains(command), "\(command) missing from uploader(1)")
        }
        for code in ["0", "1", "2", "3", "4", "5", "64", "69", "70", "73", "75", "77", "78"] {
            #expect(text.contains("\n       \(code) "), "exit code \(code) missing from uploader(1)")
        }
    }

    /// Keys in the first column of every `| key | … |` table of docs/configuration.md and
    /// docs/s3.md (a cell may name two: `` `secret_access_key` / `secret_access_key_file` ``).
    static func keysInDocs() throws -> Set<String> {
        var keys: Set<String> = []
        for doc in ["docs/configuration.md", "docs/s3.md"] {
            let text = try String(contentsOfFile: PackagePaths.root + "/" + doc, encoding: .utf8)
            var inKeyTable = false
            for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
                let cells = line.split(separator: "|", omittingEmptySubsequences: false).map {
                    $0.trimmingCharacters(in: .whitespaces)
                }
                guard line.hasPrefix("|"), cells.count > 2 else {
                    inKeyTable = false
                    continue
                }
                if cells[1] == "key" {
                    inKeyTable = true
                } else if inKeyTable, !cells[1].hasPrefix("---") {
                    let spans = cells[1].split(separator: "`", omittingEmptySubsequences: false)
                    keys.formUnion(stride(from: 1, to: spans.count, by: 2).map { String(spans[$0]) })
                }
            }
        }
        return keys
    }
}

/// Both pages written by packaging/man/mkman.py into a temporary directory.
struct GeneratedManPages {
    let dir: TempDir

    init() throws {
        dir = try TempDir(prefix: "upl-man")
        let result = try ProcessRunner.run(
            ["python3", PackagePaths.root + "/packaging/man/mkman.py", "--version", UploaderVersion.string,
             "--date", "2026-01-01", "--out", dir.path])
        guard result.exitCode == 0 else { throw HarnessError("mkman.py failed: \(result)") }
    }

    func path(_ page: String) -> String { dir.path(page) }

    /// The words of every `.TP` tag of `page`, with roff's font and minus escapes undone.
    func tags(in page: String) -> Set<String> {
        let lines = ((try? String(contentsOfFile: path(page), encoding: .utf8)) ?? "").split(separator: "\n")
        var tags: Set<String> = []
        for (index, line) in lines.enumerated() where line == ".TP" && index + 1 < lines.count {
            let tag = lines[index + 1]
                .replacingOccurrences(of: "\\fB", with: "").replacingOccurrences(of: "\\fR", with: "")
                .replacingOccurrences(of: "\\fI", with: "").replacingOccurrences(of: "\\-", with: "-")
            tags.formUnion(tag.split(whereSeparator: { $0 == " " || $0 == "/" || $0 == "," }).map(String.init))
        }
        return tags
    }

    /// `page` formatted as man shows it at 80 columns.
    func rendered(_ page: String) throws -> String {
        let result = try ProcessRunner.run(
            ["man", "-l", path(page)], environment: ["MANWIDTH": "80", "LC_ALL": "C.UTF-8"])
        guard result.exitCode == 0 else { throw HarnessError("man -l \(page) failed: \(result)") }
        return result.stdout
    }
}
