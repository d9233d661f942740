@preconcurrency import Glibc
import Foundation
import Synchronization

private let netnsSerial = Mutex(0)

/// Two network namespaces joined by a veth pair, `a` (10.213.0.1/30 on veth-a) and
/// `b` (10.213.0.2/30 on veth-b), each with its loopback up. Names are unique per
/// test run (`upl-<pid>-<n>-a`). Deleted by `stop()` or when the object goes away.
/// Needs root. Nothing outside these two namespaces is touched.
final class Netns: @unchecked Sendable {
    enum Side: Sendable { case a, b }

    let nameA: String
    let nameB: String
    let interfaceA = "veth-a"
    let interfaceB = "veth-b"
    let addressA = "10.213.0.1"
    let addressB = "10.213.0.2"
    let prefixLength = 30

    private let lock = NSLock()
    private var stopped = false

    init() throws {
        Self.removeStale()
        let serial = netnsSerial.withLock { value -> Int in
            value += 1
            return value
        }
        let base = "upl-\(getpid())-\(serial)"
        nameA = base + "-a"
        nameB = base + "-b"
        do {
            for name in [nameA, nameB] {
                try Self.ip(["netns", "add", name])
                try Self.ip(["-n", name, "link", "set", "lo", "up"])
            }
            // Created directly inside the namespaces: nothing appears in the host's.
            try Self.ip(["-n", nameA, "link", "add", interfaceA, "type", "veth", "peer", "name", interfaceB, "netns", nameB])
            try Self.ip(["-n", nameA, "addr", "add", "\(addressA)/\(prefixLength)", "dev", interfaceA])
            try Self.ip(["-n", nameB, "addr", "add", "\(addressB)/\(prefixLength)", "dev", interfaceB])
            try Self.ip(["-n", nameA, "link", "set", interfaceA, "up"])
            try Self.ip(["-n", nameB, "link", "set", interfaceB, "up"])
        } catch {
            stop()
            throw HarnessError("Netns: cannot set up namespaces (needs root and iproute2): \(error)")
        }
    }

    deinit { stop() }

    func name(_ side: Side) -> String { side == .a ? nameA : nameB }
    func interface(_ side: Side) -> String { side == .a ? interfaceA : interfaceB }
    func address(_ side: Side) -> String { side == .a ? addressA : addressB }

    /// `ip netns exec NAME`: put it before a command to run that command in the namespace.
    func prefix(_ side: Side) -> [String] { ["ip", "netns", "exec", name(side)] }

    /// Sets the veth link down: one end, or both when `side` is nil.
    func linkDown(_ side: Side? = nil) throws {
        for s in side.map({ [$0] }) ?? [.a, .b] {
            try Self.ip(["-n", name(s), "link", "set", interface(s), "down"])
        }
    }

    /// Sets the veth link up: one end, or both when `side` is nil.
    func linkUp(_ side: Side? = nil) throws {
        for s in side.map({ [$0] }) ?? [.a, .b] {
            try Self.ip(["-n", name(s), "link", "set", interface(s), "up"])
        }
    }

    /// The operational state of one end, as `ip link` shows it: UP, DOWN, LOWERLAYERDOWN, ...
    func linkState(_ side: Side) throws -> String {
        let out = try Self.ip(["-n", name(side), "-o", "link", "show", "dev", interface(side)])
        let words = out.split(whereSeparator: { $0 == " " || $0 == "\n" })
        guard let index = words.firstIndex(of: "state"), index + 1 < words.count else {
            throw HarnessError("Netns: no state in `ip link show`: \(out)")
        }
        return String(words[index + 1])
    }

    /// Runs a command inside a namespace to completion.
    func exec(
        in side: Side, _ command: [String], environment: [String: String] = [:],
        stdin: Data? = nil, timeout: TimeInterval = 60
    ) throws -> ProcessResult {
        try ProcessRunner.run(prefix(side) + command, environment: environment, stdin: stdin, timeout: timeout)
    }

    /// Starts a command inside a namespace in the background.
    func start(
        in side: Side, _ command: [String], environment: [String: String] = [:],
        outputDirectory: String? = nil
    ) throws -> RunningProcess {
        try ProcessRunner.start(prefix(side) + command, environment: environment, outputDirectory: outputDirectory)
    }

    /// Deletes both namespaces (the veth pair goes with them).
    func stop() {
        lock.lock()
        defer { lock.unlock() }
        guard !stopped else { return }
        stopped = true
        for name in [nameA, nameB] where Self.exists(name) {
            _ = try? Self.ip(["netns", "delete", name])
        }
    }

    static func exists(_ name: String) -> Bool {
        FileManager.default.fileExists(atPath: "/run/netns/" + name)
    }

    /// Runs `ip ARGS`; throws with its stderr unless it exits 0. Returns stdout.
    @discardableResult
    static func ip(_ arguments: [String]) throws -> String {
        let result = try ProcessRunner.run(["ip"] + arguments, timeout: 30)
        guard result.exitCode == 0 else {
            throw HarnessError("`ip \(arguments.joined(separator: " "))` failed (exit \(result.exitCode)): \(result.stderr)")
        }
        return result.stdout
    }

    /// Deletes `upl-<pid>-*` namespaces left behind by test processes that no longer run.
    private static func removeStale() {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: "/run/netns") else { return }
        for name in names where name.hasPrefix("upl-") {
            let parts = name.split(separator: "-")
            guard parts.count == 4, let pid = Int32(parts[1]), pid != getpid() else { continue }
            if Glibc.kill(pid, 0) != 0 && errno == ESRCH {
                _ = try? ip(["netns", "delete", name])
            }
        }
    }
}
