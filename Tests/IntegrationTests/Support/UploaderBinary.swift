@preconcurrency import Glibc
import Foundation

/// The built `uploader` executable, run as a child process.
struct UploaderBinary: Sendable {
    let path: String

    /// Finds the executable: `$UPLOADER_BIN`, else beside the test executable
    /// (`.build/<triple>/debug/`), else `<package>/.build/debug/uploader`.
    /// Throws loudly when it is absent: build it with `swift build --build-tests`.
    init() throws {
        path = try Self.locate()
    }

    init(path: String) { self.path = path }

    static func locate() throws -> String {
        var candidates: [String] = []
        if let override = ProcessInfo.processInfo.environment["UPLOADER_BIN"], !override.isEmpty {
            candidates.append(override)
        }
        let exe = URL(fileURLWithPath: PackagePaths.executablePath())
        candidates.append(exe.deletingLastPathComponent().appendingPathComponent("uploader").path)
        if let bundle = Bundle.main.executableURL {
            candidates.append(bundle.deletingLastPathComponent().appendingPathComponent("uploader").path)
        }
        candidates.append(PackagePaths.root + "/.build/debug/uploader")
        for candidate in candidates {
            var st = stat()
            if stat(candidate, &st) == 0, (st.st_mode & S_IFMT) == S_IFREG, access(candidate, X_OK) == 0 {
                return candidate
            }
        }
        throw HarnessError(
            "the uploader executable was not found (looked at: \(candidates.joined(separator: ", "))); "
                + "build it first with `swift build --build-tests` (scripts/test.sh does), or set UPLOADER_BIN")
    }

    /// Runs `uploader ARGS` to completion (killed and an error thrown after `timeout`).
    func run(
        _ arguments: [String],
        environment: [String: String] = [:],
        stdin: Data? = nil,
        currentDirectory: String? = nil,
        timeout: TimeInterval = 30
    ) throws -> ProcessResult {
        try ProcessRunner.run(
            [path] + arguments, environment: environment, stdin: stdin,
            currentDirectory: currentDirectory, timeout: timeout)
    }

    /// Starts `uploader ARGS` in the background (e.g. `run --config C`); stdout and
    /// stderr go to files in `outputDirectory` (a private temporary one when nil).
    /// `prefix` wraps the command, e.g. `netns.prefix(.a)` to run it in a namespace.
    func start(
        _ arguments: [String],
        environment: [String: String] = [:],
        currentDirectory: String? = nil,
        outputDirectory: String? = nil,
        prefix: [String] = []
    ) throws -> RunningProcess {
        try ProcessRunner.start(
            prefix + [path] + arguments, environment: environment,
            currentDirectory: currentDirectory, outputDirectory: outputDirectory)
    }
}
