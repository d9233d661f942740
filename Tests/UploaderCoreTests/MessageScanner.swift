import Foundation

/// Reads Swift source text well enough to find the message a call passes: its arguments,
/// string literals with their interpolations and escapes, literals joined by `+`. Used by
/// `TroubleshootingPageTests` to hold `docs/troubleshooting.md` to the code.
struct MessageScanner {
    /// One argument of a call as written.
    struct Argument {
        var label: String?
        var text: String
    }

    /// What an argument says: messages (several for `cond ? "a" : "b"`), or an expression to follow.
    enum Meaning: Equatable {
        case messages([String])
        case expression(String)
    }

    let chars: [Character]

    init(_ text: String) { chars = Array(text) }

    /// The 1-based line of character `index`.
    func line(at index: Int) -> Int { chars[..<index].reduce(1) { $1 == "\n" ? $0 + 1 : $0 } }

    /// Offsets just past the `(` of each call of `callee` (`logger.warn`, `fail`, `.refused`),
    /// skipping declarations (`func fail(`), comments, longer names ending the same way and
    /// occurrences inside string literals.
    func calls(of callee: String) -> [Int] {
        let needle = Array(callee + "(")
        var found: [Int] = []
        var index = 0
        while index < chars.count {
            if let skipped = skipCommentOrString(at: index) { index = skipped; continue }
            if chars[index] == needle[0], index + needle.count <= chars.count, Array(chars[index..<index + needle.count]) == needle {
                let before = index > 0 ? chars[index - 1] : " "
                let joined = needle[0] != "." && (before.isLetter || before.isNumber || before == "_")
                let declared = String(chars[max(0, index - 5)..<index]) == "func "
                if !joined && !declared { found.append(index + needle.count) }
                index += needle.count
                continue
            }
            index += 1
        }
        return found
    }

    /// The offsets of the body (braces included) of the first declaration starting `marker`
    /// (`func refusal(`, `var description`).
    func body(of marker: String) -> Range<Int>? {
        let needle = Array(marker)
        guard let start = chars.indices.first(where: { chars[$0] == needle[0] && chars[$0..<min(chars.count, $0 + needle.count)].elementsEqual(needle) }),
              let open = chars[start...].firstIndex(of: "{") else { return nil }
        var depth = 0
        var index = open
        while index < chars.count {
            if let end = skipCommentOrString(at: index) { index = end; continue }
            if chars[index] == "{" { depth += 1 }
            if chars[index] == "}" {
                depth -= 1
                if depth == 0 { return open..<(index + 1) }
            }
            index += 1
        }
        return nil
    }

    /// Offsets of the literal of each `return "…"` in `range`, outside comments and literals.
    func returnedLiterals(in range: Range<Int>) -> [Int] {
        let needle = Array("return \"")
        var found: [Int] = []
        var index = range.lowerBound + 1
        while index < range.upperBound, chars[index].isWhitespace { index += 1 }
        if chars[index] == "\"" { found.append(index) }
        while index < range.upperBound {
            if let skipped = skipCommentOrString(at: index) { index = skipped; continue }
            if chars[index] == "r", index + needle.count <= chars.count, Array(chars[index..<index + needle.count]) == needle,
               index == 0 || !(chars[index - 1].isLetter || chars[index - 1].isNumber || chars[index - 1] == "_") {
                found.append(index + needle.count - 1)
                index += needle.count - 1
                continue
            }
            index += 1
        }
        return found
    }

    /// Offsets of the literal in each `DECLARATION = "…"` (`let error = "…"`).
    func assignments(_ declaration: String) -> [Int] {
        let needle = Array(declaration + " = \"")
        var found: [Int] = []
        var index = 0
        while index + needle.count <= chars.count {
            if chars[index] == needle[0], Array(chars[index..<index + needle.count]) == needle,
               index == 0 || !(chars[index - 1].isLetter || chars[index - 1].isNumber || chars[index - 1] == "_") {
                found.append(index + needle.count - 1)
            }
            index += 1
        }
        return found
    }

    /// The literal assigned by the nearest `let NAME = "…"` or `var NAME = "…"` before `offset`.
    func assignment(of name: String, before offset: Int) -> String? {
        (assignments("var " + name) + assignments("let " + name)).filter { $0 < offset }.max().flatMap { expression(from: $0) }
    }

    /// The arguments of the call whose `(` ends just before `offset`.
    func arguments(from offset: Int) -> [Argument] {
        var arguments: [Argument] = []
        var current = ""
        var depth = 0
        var index = offset
        func finish() {
            var text = current.trimmingCharacters(in: .whitespacesAndNewlines)
            var label: String?
            if let colon = text.firstIndex(of: ":"), text[..<colon].allSatisfy({ $0.isLetter || $0.isNumber || $0 == "_" }),
               !text[..<colon].isEmpty {
                label = String(text[..<colon])
                text = text[text.index(after: colon)...].trimmingCharacters(in: .whitespacesAndNewlines)
            }
            arguments.append(Argument(label: label, text: text))
            current = ""
        }
        while index < chars.count {
            if let end = skipCommentOrString(at: index) {
                if chars[index] == "\"" { current += String(chars[index..<end]) }
                index = end
                continue
            }
            let c = chars[index]
            switch c {
            case "(", "[", "{": depth += 1
            case ")", "]", "}":
                if depth == 0 { finish(); return arguments }
                depth -= 1
            case "," where depth == 0:
                finish()
                index += 1
                continue
            default: break
            }
            current.append(c)
            index += 1
        }
        return arguments
    }

    /// The messages an argument's text gives: a literal (with literals joined by `+`), both
    /// branches of a conditional whose branches are literals, or else the expression itself.
    static func meaning(of text: String) -> Meaning {
        let scanner = MessageScanner(text)
        // Not a message: an interpolation alone (`"\(error)"`), or a multi-line literal's opening `""`.
        if text.hasPrefix("\""), !text.hasPrefix("\"\"\""), let message = scanner.expression(from: 0), !["", "…"].contains(message) {
            return .messages([message])
        }
        // `condition ? "a" : "b"`
        if let question = scanner.topLevel("?"), let colon = scanner.topLevel(":", after: question + 1) {
            let first = String(scanner.chars[(question + 1)..<colon]).trimmingCharacters(in: .whitespaces)
            let second = String(scanner.chars[(colon + 1)...]).trimmingCharacters(in: .whitespaces)
            if case .messages(let a) = meaning(of: first), case .messages(let b) = meaning(of: second) { return .messages(a + b) }
        }
        return .expression(text)
    }

    /// A message starting with the literal at `offset`: the literal, then each literal joined by
    /// `+`; a `+` with anything else after it ends the message with `…`.
    func expression(from offset: Int) -> String? {
        guard offset < chars.count, chars[offset] == "\"", let (first, end) = literal(at: offset) else { return nil }
        var message = first
        var index = end
        while true {
            var next = index
            while next < chars.count, chars[next].isWhitespace { next += 1 }
            guard next < chars.count, chars[next] == "+" else { break }
            next += 1
            while next < chars.count, chars[next].isWhitespace { next += 1 }
            guard next < chars.count, chars[next] == "\"", let (more, after) = literal(at: next) else {
                message += "…"
                break
            }
            message += more
            index = after
        }
        return Self.collapsed(message)
    }

    /// Runs of `…` made one: `\(a)\(b)` reads as one placeholder.
    static func collapsed(_ text: String) -> String {
        var out = ""
        for c in text where !(c == "…" && out.last == "…") { out.append(c) }
        return out
    }

    /// The text of the one-line literal at `offset` (an interpolation as `…`, escapes resolved) and the offset after it.
    func literal(at offset: Int) -> (String, Int)? {
        guard chars[offset] == "\"" else { return nil }
        var text = ""
        var index = offset + 1
        while index < chars.count {
            let c = chars[index]
            if c == "\"" { return (text, index + 1) }
            if c == "\n" { return nil }
            if c == "\\", index + 1 < chars.count {
                let next = chars[index + 1]
                switch next {
                case "(":
                    guard let end = closingParenthesis(from: index + 2) else { return nil }
                    text += "…"
                    index = end + 1
                    continue
                case "n": text += "\n"
                case "t": text += "\t"
                case "u":
                    guard let close = chars[index...].firstIndex(of: "}") else { return nil }
                    let hex = String(chars[(index + 3)..<close])
                    if let value = UInt32(hex, radix: 16), let scalar = Unicode.Scalar(value) { text.unicodeScalars.append(scalar) }
                    index = close + 1
                    continue
                default: text.append(next)
                }
                index += 2
                continue
            }
            text.append(c)
            index += 1
        }
        return nil
    }

    /// The offset of the `)` closing an interpolation or call whose `(` ends before `offset`.
    private func closingParenthesis(from offset: Int) -> Int? {
        var depth = 0
        var index = offset
        while index < chars.count {
            if let end = skipCommentOrString(at: index) { index = end; continue }
            switch chars[index] {
            case "(": depth += 1
            case ")":
                if depth == 0 { return index }
                depth -= 1
            default: break
            }
            index += 1
        }
        return nil
    }

    /// The offset of the first `mark` outside literals and brackets at or after `start`.
    private func topLevel(_ mark: Character, after start: Int = 0) -> Int? {
        var depth = 0
        var index = start
        while index < chars.count {
            if let end = skipCommentOrString(at: index) { index = end; continue }
            switch chars[index] {
            case "(", "[", "{": depth += 1
            case ")", "]", "}": depth -= 1
            case mark where depth == 0: return index
            default: break
            }
            index += 1
        }
        return nil
    }

    /// When a comment or a string literal starts at `index`: the offset after it.
    private func skipCommentOrString(at index: Int) -> Int? {
        let c = chars[index]
        let next: Character? = index + 1 < chars.count ? chars[index + 1] : nil
        if c == "/", next == "/" {
            var end = index
            while end < chars.count, chars[end] != "\n" { end += 1 }
            return end
        }
        if c == "/", next == "*" {
            var end = index + 2
            while end + 1 < chars.count, !(chars[end] == "*" && chars[end + 1] == "/") { end += 1 }
            return min(end + 2, chars.count)
        }
        if c == "\"" {
            if index + 2 < chars.count, next == "\"", chars[index + 2] == "\"" {
                var end = index + 3
                while end + 2 < chars.count, !(chars[end] == "\"" && chars[end + 1] == "\"" && chars[end + 2] == "\"") {
                    if chars[end] == "\\", chars[end + 1] == "(" { end = (closingParenthesis(from: end + 2) ?? end) + 1; continue }
                    end += 1
                }
                return min(end + 3, chars.count)
            }
            var end = index + 1
            while end < chars.count, chars[end] != "\"", chars[end] != "\n" {
                if chars[end] == "\\", end + 1 < chars.count {
                    if chars[end + 1] == "(" { end = (closingParenthesis(from: end + 2) ?? end) + 1; continue }
                    end += 2
                    continue
                }
                end += 1
            }
            return min(end + 1, chars.count)
        }
        return nil
    }
}
