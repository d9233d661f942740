import UploaderSupport

/// Splits config text into sections and entries: comments, quoting, `${VAR}` and line numbers.
///
/// Works on Unicode scalars line by line, so any input (binary junk, huge lines,
/// unterminated quotes) costs linear time and ends in entries or errors, never a trap.
struct IniLexer {
    private let environment: [String: String]
    private let secrets: SecretReading
    private var diagnostics: ConfigDiagnostics
    private var document = IniDocument()
    /// Index into `document.profiles` (or -1 for `[uploader]`) of the section being filled;
    /// nil before the first header and after a rejected one (its keys are skipped).
    private var current: Int?
    private var seenKeys: [String: Int] = [:]
    private var sawHeader = false
    /// Set when the value being lexed expanded a `${VAR}`.
    private var expandedVariable = false
    private var profileLines: [String: Int] = [:]

    static func lex(_ text: String, environment: [String: String], secrets: SecretReading = .read,
                    diagnostics: inout ConfigDiagnostics) -> IniDocument {
        var lexer = IniLexer(environment: environment, secrets: secrets, diagnostics: diagnostics)
        var lineNumber = 0
        var line: [Unicode.Scalar] = []
        var scalars = text.unicodeScalars[...]
        if scalars.first == "\u{FEFF}" { scalars = scalars.dropFirst() }
        for scalar in scalars {
            if scalar == "\n" {
                lineNumber += 1
                lexer.lexLine(line, number: lineNumber)
                line.removeAll(keepingCapacity: true)
            } else {
                line.append(scalar)
            }
        }
        if !line.isEmpty { lexer.lexLine(line, number: lineNumber + 1) }
        diagnostics = lexer.diagnostics
        return lexer.document
    }

    private init(environment: [String: String], secrets: SecretReading, diagnostics: ConfigDiagnostics) {
        self.environment = environment
        self.secrets = secrets
        self.diagnostics = diagnostics
    }

    private mutating func lexLine(_ raw: [Unicode.Scalar], number: Int) {
        var line = raw[...]
        if line.last == "\r" { line = line.dropLast() }
        guard let start = line.firstIndex(where: { !isBlank($0) }) else { return }
        let first = line[start]
        if first == "#" || first == ";" { return }
        if first == "[" { return lexHeader(line[start...], number: number) }
        guard let equals = line[start...].firstIndex(of: "=") else {
            diagnostics.error(number, "expected \"key = value\", a [section] header or a comment")
            return
        }
        let key = String(String.UnicodeScalarView(trimmed(line[start..<equals])))
        guard !key.isEmpty else { diagnostics.error(number, "missing key before \"=\""); return }
        guard key.unicodeScalars.allSatisfy({ !isBlank($0) && !isControl($0) && $0 != "\"" }) else {
            diagnostics.error(number, "invalid key \(quotedForMessage(key))")
            return
        }
        var entry = IniEntry(key: key, value: "", line: number, isValid: true)
        expandedVariable = false
        if let value = lexValue(line[line.index(after: equals)...], key: key, line: number) {
            entry.value = value
            if expandedVariable {
                entry.asWritten = String(String.UnicodeScalarView(trimmed(line[line.index(after: equals)...])))
            }
        } else {
            entry.isValid = false
        }
        add(entry)
    }

    private mutating func add(_ entry: IniEntry) {
        guard let current else {
            if !sawHeader {
                diagnostics.error(entry.line, "key \(quotedForMessage(entry.key)) is outside any section; start with [uploader] or [outbox NAME]")
            }
            return
        }
        let identity = entry.key.lowercased().hasPrefix("header.") ? entry.key.lowercased() : entry.key
        if let first = seenKeys[identity] {
            let title = current < 0 ? "[uploader]" : document.profiles[current].title
            diagnostics.error(entry.line, "duplicate key \(quotedForMessage(entry.key)) in \(title) (first set on line \(first))")
            return
        }
        seenKeys[identity] = entry.line
        if current < 0 { document.global?.entries.append(entry) } else { document.profiles[current].entries.append(entry) }
    }

    private mutating func lexHeader(_ line: ArraySlice<Unicode.Scalar>, number: Int) {
        current = nil
        seenKeys = [:]
        sawHeader = true
        guard let close = line.firstIndex(of: "]") else {
            diagnostics.error(number, "section header is missing its closing \"]\"")
            return
        }
        let rest = line[line.index(after: close)...].drop(while: isBlank)
        if let next = rest.first, next != "#", next != ";" {
            diagnostics.error(number, "unexpected text after the section header")
            return
        }
        let inner = String(String.UnicodeScalarView(line[line.index(after: line.startIndex)..<close]))
        let words = inner.unicodeScalars.split(whereSeparator: isBlank).map { String(String.UnicodeScalarView($0)) }
        switch (words.first, words.count) {
        case ("uploader", 1):
            if let existing = document.global {
                diagnostics.error(number, "duplicate section [uploader] (first on line \(existing.line))")
                return
            }
            document.global = IniSection(kind: .global, line: number)
            current = -1
        case ("outbox", 1):
            diagnostics.error(number, "section [outbox] needs a profile name, e.g. [outbox photos]")
        case ("outbox", 2):
            let name = words[1]
            guard Self.isValidProfileName(name) else {
                diagnostics.error(number, "invalid profile name \(quotedForMessage(name)) (use letters, digits, \".\", \"_\" and \"-\")")
                return
            }
            if let first = profileLines[name] {
                diagnostics.error(number, "duplicate profile [outbox \(name)] (first on line \(first))")
                return
            }
            profileLines[name] = number
            document.profiles.append(IniSection(kind: .outbox(name: name), line: number))
            current = document.profiles.count - 1
        case ("outbox", _):
            diagnostics.error(number, "profile name must be one word, e.g. [outbox photos]")
        default:
            var message = "unknown section [\(quotedForMessage(inner, limit: 40).dropFirst().dropLast())]"
            if let word = words.first, let guess = Suggestion.closest(to: word, among: ["uploader", "outbox"]) {
                let tail = words.dropFirst().joined(separator: " ")
                message += guess == "outbox"
                    ? "; did you mean [outbox \(tail.isEmpty ? "NAME" : tail)]?"
                    : "; did you mean [uploader]?"
            } else {
                message += " (use [uploader] or [outbox NAME])"
            }
            diagnostics.error(number, message)
        }
    }

    static func isValidProfileName(_ name: String) -> Bool {
        !name.isEmpty && name.utf8.count <= 64 && name.unicodeScalars.allSatisfy { s in
            ("a"..."z").contains(s) || ("A"..."Z").contains(s) || ("0"..."9").contains(s) || s == "." || s == "_" || s == "-"
        } && name != "." && name != ".."
    }

    /// The value after `=`: quoted or bare, comments dropped, `${VAR}` expanded; nil after an error.
    private mutating func lexValue(_ text: ArraySlice<Unicode.Scalar>, key: String, line: Int) -> String? {
        let body = text.drop(while: isBlank)
        var value = ""
        if body.first == "\"" {
            var index = body.index(after: body.startIndex)
            var closed = false
            while index < body.endIndex {
                let c = body[index]
                if c == "\"" { closed = true; index += 1; break }
                if c == "\\" {
                    guard index + 1 < body.endIndex else { break }
                    let escaped = body[index + 1]
                    if escaped != "\"" && escaped != "\\" && escaped != "$" { value.unicodeScalars.append(c) }
                    value.unicodeScalars.append(escaped)
                    index += 2
                    continue
                }
                if c == "$", index + 1 < body.endIndex, body[index + 1] == "{" {
                    guard let after = expand(body, at: index, into: &value, key: key, line: line) else { return nil }
                    index = after
                    continue
                }
                value.unicodeScalars.append(c)
                index += 1
            }
            guard closed else {
                diagnostics.error(line, "unterminated quoted value for \(key) (a closing \" is missing)")
                return nil
            }
            let rest = body[index...].drop(while: isBlank)
            if let next = rest.first, next != "#", next != ";" {
                diagnostics.error(line, "unexpected text after the closing quote of \(key)")
                return nil
            }
        } else {
            var end = body.endIndex
            for index in body.indices where body[index] == "#" || body[index] == ";" {
                if index > text.startIndex, isBlank(text[index - 1]) { end = index; break }
            }
            let raw = trimmed(body[..<end])
            var index = raw.startIndex
            while index < raw.endIndex {
                let c = raw[index]
                if c == "$", index + 1 < raw.endIndex, raw[index + 1] == "{" {
                    guard let after = expand(raw, at: index, into: &value, key: key, line: line) else { return nil }
                    index = after
                    continue
                }
                value.unicodeScalars.append(c)
                index += 1
            }
        }
        if value.unicodeScalars.contains(where: isControl) {
            diagnostics.error(line, "the value of \(key) contains a control character")
            return nil
        }
        return value
    }

    /// Expands the `${NAME}` starting at `start`; returns the index after `}`, or nil after an error.
    private mutating func expand(_ text: ArraySlice<Unicode.Scalar>, at start: Int, into value: inout String, key: String, line: Int) -> Int? {
        let nameStart = start + 2
        guard let close = text[nameStart...].firstIndex(of: "}") else {
            diagnostics.error(line, "unterminated \"${\" in the value of \(key) (a closing } is missing)")
            return nil
        }
        let name = String(String.UnicodeScalarView(text[nameStart..<close]))
        guard Self.isValidVariableName(name) else {
            diagnostics.error(line, "invalid environment variable name \(quotedForMessage(name, limit: 40)) in the value of \(key)")
            return nil
        }
        guard let expansion = environment[name] else {
            // A command that uses no secret need not see the service's environment.
            if secrets == .skip, SecretReading.holdsSecret(key) { return close + 1 }
            diagnostics.error(line, "environment variable \(name) is not set (used by \(key))")
            return nil
        }
        value += expansion
        expandedVariable = true
        return close + 1
    }

    static func isValidVariableName(_ name: String) -> Bool {
        guard let first = name.unicodeScalars.first, first == "_" || ("A"..."Z").contains(first) || ("a"..."z").contains(first) else {
            return false
        }
        return name.unicodeScalars.allSatisfy { $0 == "_" || ("A"..."Z").contains($0) || ("a"..."z").contains($0) || ("0"..."9").contains($0) }
    }
}

func isBlank(_ s: Unicode.Scalar) -> Bool { s == " " || s == "\t" }

/// Control characters other than tab: never valid in a config value (NUL, line breaks, escapes).
func isControl(_ s: Unicode.Scalar) -> Bool { (s.value < 0x20 && s != "\t") || s.value == 0x7F }

private func trimmed(_ s: ArraySlice<Unicode.Scalar>) -> ArraySlice<Unicode.Scalar> {
    guard let first = s.firstIndex(where: { !isBlank($0) }), let last = s.lastIndex(where: { !isBlank($0) }) else { return s[s.endIndex...] }
    return s[first...last]
}
