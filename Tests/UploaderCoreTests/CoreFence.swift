import Foundation

/// What `CoreFenceTests` reads: the targets of `Package.swift` with their declared dependencies,
/// and each line of a target's sources that does something the pure core may not. Text, not the
/// compiler: this toolchain lets a file import a module its target does not declare.
enum CoreFence {
    /// The package's root: three levels above this file (`Tests/UploaderCoreTests/…`).
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    /// The target holding the transition function.
    static let core = "UploaderDecisions"

    /// Modules that reach the file system, the network, inotify or threads, or carry those that do.
    static let ioModules: Set<String> = ["UploaderSupport", "UploaderConfig", "UploaderSpool", "UploaderTransfer",
                                         "UploaderWatch", "UploaderCore", "UploaderDaemon", "UploaderCommands",
                                         "CCurl", "CInotifyTools", "CSysShims", "COpenSSL"]

    /// A target as declared: its dependencies (nil when not a literal list) and its sources' folder.
    struct Target {
        var dependencies: [String]?
        var path: String
    }

    /// Every `.target(name:…)` of `manifest` (and the other kinds), by name.
    static func targets(in manifest: String) -> [String: Target] {
        let declaration = try! NSRegularExpression(
            pattern: #"\.(?:target|executableTarget|testTarget|systemLibrary)\(\s*name:\s*"([^"]+)""#)
        let text = manifest as NSString
        let matches = declaration.matches(in: manifest, range: NSRange(location: 0, length: text.length))
        var result: [String: Target] = [:]
        for (index, match) in matches.enumerated() {
            let name = text.substring(with: match.range(at: 1))
            let end = index + 1 < matches.count ? matches[index + 1].range.location : text.length
            let body = text.substring(with: NSRange(location: match.range.location, length: end - match.range.location))
            result[name] = Target(dependencies: dependencies(in: body), path: path(in: body) ?? "Sources/\(name)")
        }
        return result
    }

    /// The names in `dependencies: [ … ]`; nil when the list is not written out (a variable).
    static func dependencies(in body: String) -> [String]? {
        guard let label = body.range(of: "dependencies:") else { return [] }
        let rest = body[label.upperBound...].drop { $0 == " " || $0 == "\n" }
        guard rest.first == "[", let close = rest.firstIndex(of: "]") else { return nil }
        return rest[rest.startIndex...close].split(separator: "\"").enumerated().filter { $0.offset % 2 == 1 }.map { String($0.element) }
    }

    static func path(in body: String) -> String? {
        guard let label = body.range(of: "path: \"") else { return nil }
        return body[label.upperBound...].prefix { $0 != "\"" }.map(String.init).joined()
    }

    /// `name` and every target it depends on, directly or not.
    static func closure(of name: String, in targets: [String: Target]) -> [String] {
        var seen: [String] = []
        var pending = [name]
        while let next = pending.popLast() {
            guard !seen.contains(next) else { continue }
            seen.append(next)
            pending += targets[next]?.dependencies ?? []
        }
        return seen
    }

    /// Calls and names that do I/O, read a clock or the environment, draw a random number of
    /// their own, or start, lock or wait on threads. Libc comes in with Foundation, so its calls are
    /// listed (a call with a labelled first argument, `close(leavingQueued:)`, is one of ours, and
    /// so is a plan's step named after the call it asks for, `case link(…)`, `.unlink(…)`).
    static let forbidden: [(what: String, pattern: String)] = [
        ("a thread", #"\b(Thread|pthread_\w+|DispatchQueue|DispatchGroup|DispatchSemaphore|OperationQueue)\b"#),
        ("a lock", #"\b(Mutex|NSLock|NSCondition|Atomic)\b"#),
        ("the file system", #"\b(FileManager|FileHandle|contentsOfFile|contentsOfDirectory)\b|\b(Data|String)\(contentsOf:"#),
        ("the clock", #"\bDate\(\)|\bDate\.now\b|(?<![\w.])(clock_gettime|gettimeofday|time)\("#),
        ("the environment", #"\b(ProcessInfo|getenv|setenv)\b|\.current\b"#),
        ("a random number of its own", #"\.random\((?![^)]*using:)"#),
        ("a sleep", #"\b(sleep|usleep|nanosleep)\("#),
        ("a system call", #"(?<![\w.])(?<!case )(?<!func )(open|openat|read|write|close|fsync|fdatasync|stat|lstat|fstat|rename|renameat2|unlink|mkdir|link|socket|connect|fork|execve|posix_spawn|kill)\((?!\s*\w+:)"#),
    ]

    /// One finding: `file:line: what`.
    struct Finding: CustomStringConvertible {
        var file: String
        var line: Int
        var what: String
        var description: String { "\(file):\(line): \(what)" }
    }

    /// Each line of `source` that imports a module outside `allowed` (and Foundation) or matches `forbidden`.
    static func findings(in source: String, file: String, allowed: Set<String>) -> [Finding] {
        let importLine = try! NSRegularExpression(pattern: #"^\s*(?:@\w+\s+)*(?:\w+\s+)?import\s+(?:\w+\s+)?([A-Za-z_][\w]*)"#)
        let patterns = forbidden.map { (what: $0.what, regex: try! NSRegularExpression(pattern: $0.pattern)) }
        var found: [Finding] = []
        for (index, fullLine) in source.components(separatedBy: "\n").enumerated() {
            let line = fullLine.range(of: "//").map { String(fullLine[..<$0.lowerBound]) } ?? fullLine
            let range = NSRange(location: 0, length: (line as NSString).length)
            if let match = importLine.firstMatch(in: line, range: range) {
                let module = (line as NSString).substring(with: match.range(at: 1))
                if module != "Foundation" && !allowed.contains(module) {
                    found.append(Finding(file: file, line: index + 1, what: "imports \(module), not a dependency of the core"))
                }
                continue
            }
            // A declaration of its own (`func read(`) is no call.
            let code = line.replacingOccurrences(of: #"\bfunc\s+\w+"#, with: "func", options: .regularExpression)
            let codeRange = NSRange(location: 0, length: (code as NSString).length)
            for pattern in patterns where pattern.regex.firstMatch(in: code, range: codeRange) != nil {
                found.append(Finding(file: file, line: index + 1, what: "\(pattern.what): \(line.trimmingCharacters(in: .whitespaces))"))
            }
        }
        return found
    }
}
