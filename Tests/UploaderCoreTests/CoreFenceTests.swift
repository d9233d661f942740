import Foundation
import Testing

/// The pure core (`UploaderDecisions`: `ProfileCore.step`) does no I/O, reads no clock and draws
/// no random number of its own. Its target may depend on value targets only, and its sources —
/// and those of every target it depends on — may import nothing else and call nothing that does
/// I/O, reads the time or the environment, or touches threads. These tests hold that from
/// `Package.swift` and the sources, since this compiler lets a file import an undeclared module.
@Suite struct CoreFenceTests {
    static func targets() throws -> [String: CoreFence.Target] {
        let manifest = try String(contentsOf: CoreFence.root.appendingPathComponent("Package.swift"), encoding: .utf8)
        return CoreFence.targets(in: manifest)
    }

    @Test func theCoreTargetDependsOnNoModuleThatDoesIO() throws {
        let targets = try Self.targets()
        let core = try #require(targets[CoreFence.core], "Package.swift declares no target \(CoreFence.core)")
        try #require(core.dependencies != nil, "\(CoreFence.core)'s dependencies are not a written-out list")
        let closure = CoreFence.closure(of: CoreFence.core, in: targets)
        for name in closure {
            #expect(targets[name]?.dependencies != nil, "\(name), a dependency of the core, has no written-out list")
        }
        let io = closure.filter(CoreFence.ioModules.contains)
        #expect(io.isEmpty, "\(CoreFence.core) depends, directly or not, on modules that do I/O: \(io)")
    }

    @Test func theCoresSourcesImportOnlyItsDependenciesAndDoNoIO() throws {
        let targets = try Self.targets()
        let closure = CoreFence.closure(of: CoreFence.core, in: targets)
        var files = 0
        // A module that does I/O is reported by the test above; its own sources are not the core's.
        for name in closure where !CoreFence.ioModules.contains(name) {
            let target = try #require(targets[name])
            let allowed = Set(CoreFence.closure(of: name, in: targets))
            let folder = CoreFence.root.appendingPathComponent(target.path)
            let names = (FileManager.default.subpaths(atPath: folder.path) ?? []).filter { $0.hasSuffix(".swift") }.sorted()
            #expect(!names.isEmpty, "no sources in \(target.path)")
            for file in names {
                let source = try String(contentsOf: folder.appendingPathComponent(file), encoding: .utf8)
                for finding in CoreFence.findings(in: source, file: "\(target.path)/\(file)", allowed: allowed) {
                    Issue.record("\(finding)")
                }
                files += 1
            }
        }
        #expect(files >= 18, "the core's sources were not found (\(files) files)")
    }

    /// The scan itself: each thing it must refuse, it finds, and a pure line passes.
    @Test func theScanFindsWhatTheCoreMayNotDo() {
        let bad = """
            import Glibc
            @preconcurrency import Dispatch
            import UploaderSupport
            let t = Thread { }
            let q = DispatchQueue(label: "x")
            let names = try FileManager.default.contentsOfDirectory(atPath: "/")
            let now = Date()
            let zone = TimeZone.current
            let jitter = Double.random(in: 0...1)
            let fd = open("/etc/passwd", O_RDONLY)
            """
        let found = CoreFence.findings(in: bad, file: "Bad.swift", allowed: ["UploaderValues"])
        #expect(found.map(\.line) == Array(1...10), "\(found)")
        #expect(found.first?.description == "Bad.swift:1: imports Glibc, not a dependency of the core")

        let pure = """
            import Foundation
            import UploaderValues
            // Thread, FileManager and Date() in a comment say nothing.
            package func read(_ state: ProfileState) -> Int { state.totals.sent }
            let delay = Double.random(in: 0...window, using: &state.random)
            let later = now.wall.addingTimeInterval(30)
                case unlink(SpoolPlace, move: Int)
            try disk.run(.link(from, to: to, move: 0))
            """
        let none = CoreFence.findings(in: pure, file: "Pure.swift", allowed: ["UploaderValues"])
        #expect(none.isEmpty, "\(none)")
    }
}
