@preconcurrency import Glibc
import Foundation
import Synchronization
import XCTest

/// The daemon's threads stay bounded by the work: one profile at `concurrency = 4` holds at most
/// 12 (`/proc/PID/task`), idle and at its peak while uploading — the main thread, the service
/// loop, the watcher, the spool counter and the pool (`ProfileRunner.workerCount`: 4 + 4).
final class ThreadCountTests: XCTestCase {
    static let limit = 12

    func testOneProfileAtConcurrencyFourHoldsAtMostTwelveThreadsIdleAndWhileUploading() throws {
        let sink = try NginxSink()
        let fx = try SpoolFixture(url: sink.url("tc/{name}"), extra: "concurrency = 4")
        let daemon = try fx.startDaemon()
        defer { _ = daemon.stop() }
        try waitUntil(timeout: 10, "the daemon to say it runs") { daemon.stderrText().contains(" running") }

        // Idle: sampled for half a second once it runs (reporter rounds, the spool counter's first count).
        let idle = ThreadSampler(pid: daemon.pid)
        let quiet = Date().addingTimeInterval(0.5)
        try waitUntil(timeout: 5, poll: 0.01, "half a second of idle samples") { Date() >= quiet }
        let idlePeak = idle.stop()

        let uploading = ThreadSampler(pid: daemon.pid)
        var hashes: [String: String] = [:]
        for i in 0..<50 {
            let data = Data((0..<(256 * 1024 + i)).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ i &* 7) })
            try fx.drop("f\(i).bin", data)
            hashes["f\(i).bin"] = sha256(of: data)
        }
        try waitUntil(timeout: 60, poll: 0.01, "every file in sent/") { Set(fx.files(in: fx.sent)) == Set(hashes.keys) }
        let uploadPeak = uploading.stop()
        for (name, hash) in hashes { XCTAssertEqual(try sha256(ofFile: sink.file("tc/" + name)), hash, name) }

        func named(_ peak: ThreadSampler.Peak) -> String {
            peak.names.sorted { $0.key < $1.key }.map { "\($0.key) × \($0.value)" }.joined(separator: ", ")
        }
        print("threads of uploader run (one profile, concurrency = 4): idle \(idlePeak.count) (\(named(idlePeak))), "
              + "peak while uploading \(uploadPeak.count) (\(named(uploadPeak))), of \(uploadPeak.samples) samples")
        XCTAssertGreaterThan(idle.samplesTaken, 10)
        XCTAssertGreaterThan(uploadPeak.samples, 10)
        XCTAssertLessThanOrEqual(idlePeak.count, Self.limit, "threads while idle")
        XCTAssertLessThanOrEqual(uploadPeak.count, Self.limit, "threads at the peak of uploading")
    }
}

/// Counts a process's threads (`/proc/PID/task`) every 2 ms on a thread of its own, keeping the most seen.
private final class ThreadSampler: Sendable {
    struct Peak {
        var count = 0
        var samples = 0
        /// The threads' names (`comm`) at the peak, each with how many bear it.
        var names: [String: Int] = [:]
    }
    private let peak = Mutex(Peak())
    private let stopping = Atomic<Bool>(false)
    private let done = DispatchSemaphore(value: 0)

    init(pid: Int32) {
        Thread { [self] in
            let tasks = "/proc/\(pid)/task"
            while !stopping.load(ordering: .relaxed) {
                if let ids = try? FileManager.default.contentsOfDirectory(atPath: tasks) {
                    let higher = peak.withLock { p in
                        p.samples += 1
                        return ids.count > p.count
                    }
                    if higher {
                        var names: [String: Int] = [:]
                        for id in ids {
                            let comm = (try? String(contentsOfFile: "\(tasks)/\(id)/comm", encoding: .utf8)) ?? "?"
                            names[comm.trimmingCharacters(in: .whitespacesAndNewlines), default: 0] += 1
                        }
                        peak.withLock { p in
                            if ids.count > p.count { (p.count, p.names) = (ids.count, names) }
                        }
                    }
                }
                usleep(2000)
            }
            done.signal()
        }.start()
    }

    var samplesTaken: Int { peak.withLock { $0.samples } }

    /// Ends the sampling; the most threads seen and how many samples were taken.
    func stop() -> Peak {
        stopping.store(true, ordering: .relaxed)
        done.wait()
        return peak.withLock { $0 }
    }
}
