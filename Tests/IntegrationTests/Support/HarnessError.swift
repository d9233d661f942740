import Foundation

/// A failure of the test harness itself (a helper could not do its job). The message
/// is loud on purpose: these must fail the test, never skip it.
struct HarnessError: Error, CustomStringConvertible, LocalizedError {
    let message: String

    init(_ message: String) { self.message = message }

    var description: String { "HARNESS: \(message)" }
    var errorDescription: String? { description }
}

/// Locations inside the package checkout, found from this source file's path.
enum PackagePaths {
    /// The directory holding Package.swift.
    static let root: String = {
        // #filePath is <root>/Tests/IntegrationTests/Support/HarnessError.swift
        var url = URL(fileURLWithPath: #filePath)
        for _ in 0..<4 { url.deleteLastPathComponent() }
        if FileManager.default.fileExists(atPath: url.appendingPathComponent("Package.swift").path) {
            return url.path
        }
        // Sources moved after the build: walk up from the test executable instead.
        var dir = URL(fileURLWithPath: executablePath()).deletingLastPathComponent()
        while dir.path != "/" {
            if FileManager.default.fileExists(atPath: dir.appendingPathComponent("Package.swift").path) {
                return dir.path
            }
            dir.deleteLastPathComponent()
        }
        return url.path
    }()

    /// `Tests/Fixtures/<name>`; throws if the file does not exist.
    static func fixture(_ name: String) throws -> String {
        let path = root + "/Tests/Fixtures/" + name
        guard FileManager.default.fileExists(atPath: path) else {
            throw HarnessError("fixture \(path) does not exist")
        }
        return path
    }

    /// The running test executable (resolved through /proc/self/exe).
    static func executablePath() -> String {
        if let path = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") {
            return path
        }
        return Bundle.main.executablePath ?? CommandLine.arguments[0]
    }
}
