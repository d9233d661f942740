import Foundation
import Testing
@testable import UploaderConfig

/// `docs/troubleshooting.md` has a row for every error and warning line an operator can meet,
/// and for no line the code no longer writes; this suite reads `Sources/` to hold it there.
///
/// Covered (`funnels`): the message of every log line at WARN or ERROR (`logger.warn`, `.error`,
/// `.warnOnce`, `.log(.warn|.error, …)`, `.plain`, the core's `log`, `warnOnce` and
/// `close(leavingQueued:)`, a hook ledger's `Problem`); every config diagnostic
/// (`diagnostics.error/warning`, `ConfigError(message:)`, printed `PATH:LINE: …`); every
/// `uploader: …` line on stderr (`Daemon.printError`, the daemon's `fail`, `Logger.standardError`)
/// and usage errors; and the words other code hands those funnels in a variable (`indirect` says
/// where each is found): a URL's, proxy's or policy value's problem, an unknown key, why a file is
/// not uploaded, a refused spool owner, a held lock, a refused write, the retry lock, a watcher
/// that cannot start, a manifest moved aside (`returningMessages`, `assignedMessages`).
/// A message is its literal with each interpolation `\(…)` written `…` (a run of them as one),
/// escapes resolved; literals joined by `+` are one message, and `+` anything else ends it in `…`.
/// Not covered: the OS's words after a colon (`SystemError`, `strerror`, a file read's short
/// reason), the `key=value` fields of a log line, INFO and DEBUG lines, and what commands print
/// on stdout. A new function that writes a line from a message it is given belongs in `funnels`;
/// a call passing a variable the suite cannot follow fails `everyMessageHandedOn…`.
@Suite struct TroubleshootingPageTests {
    static let page = "docs/troubleshooting.md"

    /// A call that writes a line, and which of its arguments holds the message.
    struct Funnel {
        var callee: String
        /// The message argument's label, or else its position.
        var label: String?
        var position: Int = 0
        /// Only files with one of these names (or under one of these folders); all when empty.
        var within: [String] = []
        /// Files left out (where the funnel itself is defined).
        var except: [String] = []
        /// The first argument is a level: only `.warn` and `.error` lines count.
        var leveled = false
    }

    static let funnels: [Funnel] = [
        Funnel(callee: "logger.error"),
        Funnel(callee: "logger.warn"),
        Funnel(callee: "logger.warnOnce", position: 1),
        Funnel(callee: "logger.log", position: 1, leveled: true),
        Funnel(callee: "logger.plain", position: 1, leveled: true),
        Funnel(callee: "Logger.standardError"),
        Funnel(callee: "log", position: 1, within: ["UploaderDecisions/"], leveled: true),
        Funnel(callee: "warnOnce", position: 1, within: ["UploaderDecisions/"]),
        Funnel(callee: "close", label: "leavingQueued", within: ["UploaderDecisions/"]),
        Funnel(callee: "diagnostics.error", position: 1),
        Funnel(callee: "diagnostics.warning", position: 1),
        Funnel(callee: "Daemon.printError"),
        Funnel(callee: "fail", within: ["Daemon.swift"]),
        Funnel(callee: "Problem", label: "what", within: ["HookLedger.swift"]),
        Funnel(callee: "ConfigError", label: "message", except: ["ConfigError.swift"]),
        Funnel(callee: "UsageError"),
        Funnel(callee: "ProxyURLError"),
        Funnel(callee: "PolicyValueError"),
        Funnel(callee: ".refused", within: ["Claimer.swift"]),
        Funnel(callee: ".refuse", within: ["ClaimSetback.swift"]),
        Funnel(callee: ".refuseSettlingRecord", within: ["ClaimSetback.swift"]),
        Funnel(callee: ".refuseForNow", within: ["ClaimSetback.swift"]),
        Funnel(callee: "print", within: ["DirectoryWalker.swift"]),
        Funnel(callee: "StatusProblem", label: "message", within: ["StatusProblem.swift"]),
        Funnel(callee: "quarantine", label: "because", within: ["Recovery.swift", "UploaderDecisions/SpoolPlan/"]),
        Funnel(callee: "PlanNote", position: 1, within: ["UploaderDecisions/SpoolPlan/"], leveled: true),
    ]

    /// Declarations whose every `return "…"` is a message (a problem, a refusal, an error's
    /// description), or whose body is one literal (`var description: String { "…" }`).
    static let returningMessages: [(file: String, declaration: String)] = [
        ("URLCheck.swift", "static func problem("),
        ("SpoolOwnerIdentity.swift", "static func take("),
        ("SpoolOwnerIdentity.swift", "private static func become("),
        ("SpoolLock.swift", "package var description"),
        ("WriteRefused.swift", "package var description"),
        ("RetryMoveLock.swift", "package var description"),
    ]

    /// Variables whose every `let`/`var NAME = "…"` in a file is a message handed on.
    static let assignedMessages: [(file: String, name: String)] = [
        ("ConfigKeys.swift", "message"),
        ("InotifyWatcher.swift", "error"),
    ]

    /// Funnels passed a message in a variable, keyed `File.swift: expression`, and where the
    /// messages it carries are found (each found there in its own right by the lists above).
    static let indirect: [String: String] = [
        "ConfigReloader.swift: error.description": "a ConfigError: diagnostics.error",
        "ConfigReloader.swift: warning": "config warnings: diagnostics.warning",
        "Daemon.swift: warning": "config warnings: diagnostics.warning",
        "Daemon.swift: \"\\(error)\"": "the watcher's start error: InotifyWatcher.swift's `error`",
        "UploaderCLI.swift: \"\\(error)\"": "a UsageError",
        "UploaderCLI.swift: refusal": "SpoolOwnerIdentity.swift's returns",
        "UploaderCLI.swift: error.description": "a ConfigError: diagnostics.error, ConfigLoader's ConfigError(message:)",
        "UploaderCLI.swift: warning": "config warnings: diagnostics.warning",
        "ProfileExecutor.swift: line.message": "the core's log lines: log and warnOnce in UploaderDecisions",
        "ProfileCore.swift: message": "the definition of warnOnce: its callers",
        "Transition+Attempt.swift: message": "the definition of close(leavingQueued:): its callers",
        "Claimer.swift: reason": "why a claim refuses a file: ClaimSetback.swift's .refuse, .refuseForNow and .refuseSettlingRecord",
        "ClaimSetback.swift: reason": "the OS's words",
        "ProfileExecutor+Hooks.swift: problem.what": "HookLedger.swift's Problem(what:)",
        "ProfileBuilder+Policy.swift: error.message": "PolicyValueError",
        "ProfileBuilder.swift: problem": "URLCheck.swift's returns",
        "ProfileBuilder+RemoteFile.swift: problem": "URLCheck.swift's returns",
        "ProfileBuilder.swift: error.description": "ProxyURLError",
        "SectionReader.swift: ConfigKeys.unknownKeyMessage(entry.key, in: section)": "ConfigKeys.swift's `message`",
        "StatusCommand.swift: problem.message": "StatusProblem.swift's StatusProblem(message:)",
        "StatusProblem.swift: reason": "a spool `status` cannot read: DirectoryWalker.swift's print",
        "DiskStepPerformer.swift: note.message": "the spool planner's log lines: PlanNote in UploaderDecisions/SpoolPlan",
    ]

    /// What `fail` and `Daemon.printError` put before a caller's message.
    static let programPrefix = "uploader: …"

    /// Where one message is written.
    struct Site: CustomStringConvertible {
        var file: String
        var line: Int
        var description: String { "\(file):\(line)" }
    }

    /// What the sources say: each message with where it is written, and each indirect funnel met.
    struct Found {
        var messages: [String: [Site]] = [:]
        var unlisted: [String: Site] = [:]
        var indirectSeen: Set<String> = []
    }

    /// A file or declaration this suite relies on is not where it looked.
    struct Missing: Error, CustomStringConvertible {
        var what: String
        var description: String { what }
    }

    static var root: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    }

    static func sourceFiles() throws -> [(relative: String, text: String)] {
        let sources = root.appendingPathComponent("Sources")
        guard let enumerator = FileManager.default.enumerator(at: sources, includingPropertiesForKeys: nil) else {
            throw Missing(what: "cannot list \(sources.path)")
        }
        var files: [(String, String)] = []
        for case let url as URL in enumerator where url.pathExtension == "swift" {
            let relative = String(url.path.dropFirst(sources.path.count + 1))
            files.append((relative, try String(contentsOf: url, encoding: .utf8)))
        }
        return files.sorted { $0.0 < $1.0 }
    }

    static func applies(_ within: [String], to relative: String) -> Bool {
        within.isEmpty || within.contains { $0.hasSuffix("/") ? relative.contains($0) : (relative as NSString).lastPathComponent == $0 }
    }

    /// The sources are read once for all the tests of the suite.
    static let scanned = Result { try scan() }

    static func scan() throws -> Found {
        var found = Found()
        for (relative, text) in try sourceFiles() {
            let scanner = MessageScanner(text)
            let name = (relative as NSString).lastPathComponent
            func add(_ message: String, at offset: Int) {
                found.messages[message, default: []].append(Site(file: "Sources/" + relative, line: scanner.line(at: offset)))
            }
            for funnel in funnels where applies(funnel.within, to: relative) && !funnel.except.contains(name) {
                for offset in scanner.calls(of: funnel.callee) {
                    let arguments = scanner.arguments(from: offset)
                    // A level chosen at run time (`problem.level`) counts; a fixed lower one does not.
                    if funnel.leveled, let level = arguments.first?.text, level.hasPrefix(".") || level.contains("?"),
                       !level.contains(".warn"), !level.contains(".error") { continue }
                    let argument = funnel.label.map { label in arguments.first { $0.label == label } }
                        ?? (funnel.position < arguments.count ? arguments[funnel.position] : nil)
                    guard let argument else { continue }
                    switch MessageScanner.meaning(of: argument.text) {
                    case .messages(let messages):
                        // `"uploader: " + message`: a funnel's own definition, its callers hold the words.
                        for message in messages where message != programPrefix { add(message, at: offset) }
                    case .expression(let expression):
                        let key = "\(name): \(expression)"
                        if indirect[key] != nil {
                            found.indirectSeen.insert(key)
                        } else if expression.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "_" }),
                                  let message = scanner.assignment(of: expression, before: offset) {
                            add(message, at: offset)
                        } else {
                            found.unlisted[key] = Site(file: "Sources/" + relative, line: scanner.line(at: offset))
                        }
                    }
                }
            }
            for (file, declaration) in returningMessages where file == name {
                guard let body = scanner.body(of: declaration) else {
                    throw Missing(what: "no \(declaration) in \(relative): update TroubleshootingPageTests.returningMessages")
                }
                for offset in scanner.returnedLiterals(in: body) {
                    if let message = scanner.expression(from: offset), message != "…" { add(message, at: offset) }
                }
            }
            for (file, variable) in assignedMessages where file == name {
                for keyword in ["let ", "var "] {
                    for offset in scanner.assignments(keyword + variable) {
                        if let message = scanner.expression(from: offset) { add(message, at: offset) }
                    }
                }
            }
        }
        return found
    }

    /// The messages the page lists: the code span that opens each table row, `\|` read as `|`.
    static func listed() throws -> [String] {
        let text = try String(contentsOf: root.appendingPathComponent(page), encoding: .utf8)
        var listed: [String] = []
        for line in text.components(separatedBy: "\n") where line.hasPrefix("| `") {
            let row = line.dropFirst(2)
            let ticks = row.prefix { $0 == "`" }
            let body = row.dropFirst(ticks.count)
            guard let end = body.range(of: ticks) else { continue }
            var message = String(body[..<end.lowerBound]).replacingOccurrences(of: "\\|", with: "|")
            if ticks.count > 1 { message = message.trimmingCharacters(in: CharacterSet(charactersIn: " ")) }
            listed.append(message)
        }
        return listed
    }

    /// A page row for `message` as the page writes it: a code span with `|` escaped.
    static func row(_ message: String) -> String {
        let escaped = message.replacingOccurrences(of: "|", with: "\\|")
        let span = escaped.contains("`") ? "`` \(escaped) ``" : "`\(escaped)`"
        return "| \(span) | CAUSE | FIX |"
    }

    /// The message of `candidates` nearest to `message`, when near enough to be its rewording.
    static func closest(to message: String, among candidates: [String]) -> String? {
        let typed = Array(message.unicodeScalars)
        let scored = candidates.map { ($0, Suggestion.editDistance(typed, Array($0.unicodeScalars))) }
        guard let best = scored.min(by: { $0.1 < $1.1 }), best.1 <= max(3, typed.count / 3) else { return nil }
        return best.0
    }

    @Test func thePageListsEveryMessageTheCodeWrites() throws {
        let found = try Self.scanned.get()
        let listed = Set(try Self.listed())
        let missing = found.messages.keys.filter { !listed.contains($0) }.sorted {
            found.messages[$0]![0].description < found.messages[$1]![0].description
        }
        let text = missing.map { "\(Self.row($0))    <- \(found.messages[$0]!.map(\.description).joined(separator: ", "))" }
        if !missing.isEmpty { Issue.record("""
            \(Self.page) lacks \(missing.count) message(s) the code writes; add a row for each, in the table \
            of the place it appears (the message exactly as shown, then its cause and its fix):
            \(text.joined(separator: "\n"))
            """) }
    }

    @Test func thePageListsNoMessageTheCodeNoLongerWrites() throws {
        let found = try Self.scanned.get()
        let listed = try Self.listed()
        let stale = listed.filter { found.messages[$0] == nil }
        let unlisted = found.messages.keys.filter { !listed.contains($0) }
        let lines = stale.map { message in
            "`\(message)`" + (Self.closest(to: message, among: unlisted).map { "    <- reworded? the code now says `\($0)`" } ?? "")
        }
        if !stale.isEmpty { Issue.record("""
            \(Self.page) lists \(stale.count) message(s) no code writes (reworded or removed); \
            remove each row, or correct it to the code's words:
            \(lines.joined(separator: "\n"))
            """) }
    }

    @Test func thePageListsEachMessageOnce() throws {
        let listed = try Self.listed()
        let twice = Set(listed.filter { message in listed.filter { $0 == message }.count > 1 })
        #expect(twice.isEmpty, "\(Self.page) lists these more than once: \(twice.sorted().map { "`\($0)`" }.joined(separator: ", "))")
    }

    @Test func everyMessageHandedOnInAVariableIsTracedToItsWords() throws {
        let found = try Self.scanned.get()
        let lines = found.unlisted.sorted { $0.value.description < $1.value.description }
            .map { "\($0.value): \($0.key.split(separator: ":", maxSplits: 1)[1].trimmingCharacters(in: .whitespaces))" }
        if !lines.isEmpty { Issue.record("""
            these calls write a message held in a variable this suite cannot follow; pass a literal, \
            or add the call to TroubleshootingPageTests.indirect (key "File.swift: expression") and make \
            sure the place that words the message is a funnel, a returningMessages declaration or an assignedMessages entry:
            \(lines.joined(separator: "\n"))
            """) }
        let stale = Set(Self.indirect.keys).subtracting(found.indirectSeen).sorted()
        if !stale.isEmpty { Issue.record("TroubleshootingPageTests.indirect names calls no longer in Sources/; remove: \(stale)") }
    }

    @Test func theScannerReadsLiteralsAsThePageWritesThem() {
        #expect(MessageScanner.meaning(of: #""no profile named \"\(unknown)\" in \(config.path)""#)
            == .messages(["no profile named \"…\" in …"]))
        #expect(MessageScanner.meaning(of: #""cannot \(verb) \(error.path ?? ""): \(error.reasonWithCode)""#)
            == .messages(["cannot … …: …"]))
        #expect(MessageScanner.meaning(of: "\"a \\(x)\"\n    + \"b\"") == .messages(["a …b"]))
        #expect(MessageScanner.meaning(of: "\"a\" + (pid.map { \" (\\($0))\" } ?? \"\")") == .messages(["a…"]))
        #expect(MessageScanner.meaning(of: #"failed ? "x (needs y)" : "z""#) == .messages(["x (needs y)", "z"]))
        #expect(MessageScanner.meaning(of: #""\(error)""#) == .expression(#""\(error)""#))
        #expect(MessageScanner.meaning(of: "\"\"\"\n    text\n    \"\"\"") == .expression("\"\"\"\n    text\n    \"\"\""))
    }
}
