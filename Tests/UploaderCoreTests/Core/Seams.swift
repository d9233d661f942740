@preconcurrency import Glibc
import Foundation
import Synchronization
@testable import UploaderSupport
@testable import UploaderConfig
@testable import UploaderSpool
@testable import UploaderTransfer
@testable import UploaderWatch
@testable import UploaderCore
@testable import UploaderDaemon
@testable import UploaderCommands

/// A clock that moves only when the test says so; a thread waiting on it waits until then.
final class ManualClock: Clock {
    private let instant: Mutex<Instant>
    private let sleepers = HandMovedSleepers()

    init(start: Date = Date(timeIntervalSince1970: 1_800_000_000)) { instant = Mutex(Instant(wall: start, mono: 1000)) }

    var now: Date { instant.withLock { $0.wall } }
    var monotonic: Double { instant.withLock { $0.mono } }

    func advance(by seconds: Double) {
        instant.withLock { $0 = $0.adding(seconds) }
        sleepers.clockMoved()
    }

    func wait(for latch: Latch?, until deadline: Double) -> Bool {
        sleepers.wait(for: latch, until: deadline) { monotonic }
    }

    /// How many threads wait on this clock now.
    var waiting: Int { sleepers.count }
}

/// A destination scripted answer by answer, standing in for the network: each transport the
/// runner makes talks to it; it records what it received and can hold a request until cancelled.
final class ScriptedServer: Sendable {
    enum Answer: Sendable {
        case status(Int, retryAfter: String? = nil)
        case unreachable
        /// Takes the request and never answers until the runner cancels it.
        case hangUntilCancelled
    }

    struct Received: Sendable {
        var idempotencyKey: String?
        var body: [UInt8]
    }

    private struct State {
        var script: [Answer] = []
        var received: [Received] = []
        var hanging = 0
    }

    private let state = Mutex(State())

    init(_ script: [Answer]) { state.withLock { $0.script = script } }

    var received: [Received] { state.withLock { $0.received } }
    var hanging: Int { state.withLock { $0.hanging } }

    func answer(_ request: UploadRequest) -> Result<UploadResponse, TransferFailure> {
        let answer = state.withLock { $0.script.isEmpty ? .status(200) : $0.script.removeFirst() }
        if case .unreachable = answer { return .failure(.unreachable("connect: Connection refused")) }
        let body = Self.read(request.body)
        state.withLock {
            $0.received.append(Received(idempotencyKey: request.headers.first { $0.name == "Idempotency-Key" }?.value, body: body))
        }
        switch answer {
        case .status(let status, let retryAfter):
            return .success(UploadResponse(status: status, retryAfter: retryAfter, bytesSent: Int64(body.count), effectiveURL: request.url))
        case .hangUntilCancelled:
            state.withLock { $0.hanging += 1 }
            // The fake network's wait for the runner's cancel: a real transfer would be blocked in curl here.
            while !request.cancellation.isCancelled { usleep(1000) }
            state.withLock { $0.hanging -= 1 }
            return .failure(.cancelled(bytesSent: Int64(body.count), connected: true))
        case .unreachable:
            preconditionFailure()
        }
    }

    /// The body's bytes, as a server would have received them.
    static func read(_ body: RequestBody) -> [UInt8] {
        var bytes: [UInt8] = []
        for segment in body.segments {
            switch segment {
            case .bytes(let b):
                bytes += b
            case .file(let fd, let offset, let length):
                var chunk = [UInt8](repeating: 0, count: Int(length))
                let n = chunk.withUnsafeMutableBytes { pread(fd, $0.baseAddress, Int(length), off_t(offset)) }
                bytes += chunk.prefix(max(0, n))
            }
        }
        return bytes
    }
}

/// The runner's transport in tests: every request goes to the scripted server.
final class ScriptedTransport: Transport {
    let server: ScriptedServer
    init(_ server: ScriptedServer) { self.server = server }
    func send(_ request: UploadRequest) -> Result<UploadResponse, TransferFailure> { server.answer(request) }
}

/// A probe that answers what the test last said.
final class ScriptedProbe: ReachabilityProbe {
    private let problem = Mutex<String?>(nil)
    private let count = Mutex(0)

    func set(reachable: Bool) { problem.withLock { $0 = reachable ? nil : "connect: Connection refused" } }
    var probes: Int { count.withLock { $0 } }

    func check() -> String? {
        count.withLock { $0 += 1 }
        return problem.withLock { $0 }
    }
}
