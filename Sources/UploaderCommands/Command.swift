import UploaderSupport
import UploaderConfig
import UploaderSpool
import UploaderTransfer
import UploaderWatch
import UploaderCore
import UploaderDaemon

/// A parsed command line: what the user asked for, validated, before anything runs.
package enum Command: Equatable {
    case run(config: String?, profiles: [String], once: Bool)
    case status(config: String?, profiles: [String], json: Bool, options: StatusOptions)
    case retry(config: String?, profiles: [String], all: Bool, files: [String])
    case enqueue(config: String?, profile: String, move: Bool, files: [String])
    case checkConfig(config: String?)
    case version
    case help(String?)
}

/// A command line that cannot be run; exits 64 (`EX_USAGE`) with this one sentence.
package struct UsageError: Error, Equatable, CustomStringConvertible {
    package let message: String
    package init(_ message: String) { self.message = message }
    package var description: String { message }
}

/// Parses `uploader` arguments in argument-parser's shape: subcommand, then options.
package enum ArgumentParser {
    package static let commands = ["run", "status", "retry", "enqueue", "check-config", "help"]

    package static func parse(_ arguments: [String]) throws -> Command {
        guard let first = arguments.first else { return .help(nil) }
        switch first {
        case "--version", "-V": return .version
        case "--help", "-h": return .help(nil)
        case "help":
            guard arguments.count <= 2 else { throw UsageError("help takes at most one command name") }
            if arguments.count == 2 && !commands.contains(arguments[1]) {
                throw UsageError("unknown command \"\(arguments[1])\"; commands: \(commands.joined(separator: ", "))")
            }
            return .help(arguments.count == 2 ? arguments[1] : nil)
        default: break
        }
        guard commands.contains(first) else {
            throw UsageError("unknown command \"\(first)\"; commands: \(commands.joined(separator: ", ")) (see uploader --help)")
        }
        var options = Options(command: first)
        var index = 1
        while index < arguments.count {
            let arg = arguments[index]
            index += 1
            if !options.positionalOnly && arg.hasPrefix("-") && arg != "-" {
                if arg == "--" { options.positionalOnly = true; continue }
                if arg == "--help" || arg == "-h" { return .help(first) }
                let (name, inlineValue) = split(arg)
                func value() throws -> String {
                    if let inlineValue { return inlineValue }
                    guard index < arguments.count else { throw UsageError("\(name) needs a value") }
                    index += 1
                    return arguments[index - 1]
                }
                switch (first, name) {
                case (_, "--config"): options.config = try value()
                case ("run", "--profile"), ("status", "--profile"), ("retry", "--profile"), ("enqueue", "--profile"):
                    options.profiles.append(try value())
                case ("run", "--once"): options.once = true
                case ("status", "--json"): options.json = true
                case ("status", "--expect-daemon"): options.status.expectDaemon = true
                case ("status", "--check"): options.check = true
                case ("status", let threshold) where StatusOptions.thresholdOptions.contains(threshold):
                    try options.status.set(threshold, try value())
                case ("retry", "--all"): options.all = true
                case ("enqueue", "--move"): options.move = true
                default: throw UsageError("unknown option \(name) for \(first) (see uploader help \(first))")
                }
            } else {
                options.positionals.append(arg)
            }
        }
        return try options.command()
    }

    private static func split(_ arg: String) -> (String, String?) {
        guard arg.hasPrefix("--"), let eq = arg.firstIndex(of: "=") else { return (arg, nil) }
        return (String(arg[..<eq]), String(arg[arg.index(after: eq)...]))
    }

    private struct Options {
        let name: String
        var config: String?
        var profiles: [String] = []
        var once = false
        var json = false
        var check = false
        var status = StatusOptions()
        var all = false
        var move = false
        var positionals: [String] = []
        var positionalOnly = false

        init(command: String) { self.name = command }

        func command() throws -> Command {
            switch name {
            case "run":
                try noPositionals()
                return .run(config: config, profiles: profiles, once: once)
            case "status":
                try noPositionals()
                if check && json { throw UsageError("status takes --check or --json, not both") }
                var status = status
                status.check = check
                if !check, let threshold = status.thresholdsGiven.first {
                    throw UsageError("\(threshold) is a threshold of status --check; add --check")
                }
                try status.validate()
                return .status(config: config, profiles: profiles, json: json, options: status)
            case "retry":
                if all && !positionals.isEmpty { throw UsageError("retry takes --all or FILE..., not both") }
                if !all && positionals.isEmpty { throw UsageError("retry needs --all or at least one FILE") }
                return .retry(config: config, profiles: profiles, all: all, files: positionals)
            case "enqueue":
                guard profiles.count == 1 else { throw UsageError("enqueue needs exactly one --profile NAME") }
                if positionals.isEmpty { throw UsageError("enqueue needs at least one FILE") }
                return .enqueue(config: config, profile: profiles[0], move: move, files: positionals)
            default:
                try noPositionals()
                return .checkConfig(config: config)
            }
        }

        func noPositionals() throws {
            if let extra = positionals.first { throw UsageError("unexpected argument \"\(extra)\" for \(name)") }
        }
    }
}
