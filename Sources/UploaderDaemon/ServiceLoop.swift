import Synchronization
import UploaderSupport

/// The daemon's one thread for what comes from outside and what comes due: the handled signals
/// (a signalfd), the kernel's network changes (the rtnetlink socket), every profile's deadlines
/// (its owner's `.tick`) and the service reporter's rounds. It waits in poll(2) on those
/// descriptors and a pipe (`WakePipe`) that wakes it when a deadline moves sooner or the loop stops, with the
/// next deadline as its timeout. Deadlines are kept on the daemon's clock (`monotonic`, which is
/// CLOCK_MONOTONIC for the system's), the one the owners compute them on.
///
/// What it runs must not block: a signal is posted to the main thread, a network change and a
/// tick step an owner (whose steps never block), a reporter's round writes small files.
package final class ServiceLoop: DeadlineTickers {
    private struct Deadline {
        var due: Double?
        var tick: @Sendable () -> Void
    }

    private struct State {
        var deadlines: [Int: Deadline] = [:]
        var sources: [(fd: Int32, readable: @Sendable () -> Bool)] = []
        var nextID = 1
        var stopping = false
    }

    private let state = Mutex(State())
    private let wakePipe = WakePipe()
    private let ended = Latch()
    private let clock: any Clock

    package init(clock: any Clock = SystemClock()) {
        self.clock = clock
    }

    /// The monotonic seconds deadlines are kept in: the daemon's clock.
    package var monotonic: Double { clock.monotonic }

    /// Calls `readable` on the loop's thread whenever `fd` has something to read (or fails); once
    /// it returns false the descriptor is no longer watched.
    package func watch(_ fd: Int32, readable: @escaping @Sendable () -> Bool) {
        state.withLock { $0.sources.append((fd, readable)) }
        wake()
    }

    /// Takes the handled signals (blocked in every thread) from a signalfd and hands each to
    /// `received`; throws when no signalfd can be made.
    package func takeSignals(_ handled: [Signal], received: @escaping @Sendable (Signal) -> Void) throws(Errno) {
        let signals = try SignalDescriptor(for: handled)
        watch(signals.rawValue) {
            while true {
                do {
                    guard let signal = try signals.next() else { return true }
                    received(signal)
                } catch {
                    // A failed read leaves the signalfd watched, as an empty one does.
                    return true
                }
            }
        }
    }

    package func makeTicker() -> any DeadlineTicker { Ticker(loop: self, id: register()) }

    private func register() -> Int {
        state.withLock { s in
            defer { s.nextID += 1 }
            return s.nextID
        }
    }

    fileprivate func set(_ id: Int, due: Double?, tick: (@Sendable () -> Void)? = nil) {
        let sooner = state.withLock { s -> Bool in
            guard var deadline = s.deadlines[id] ?? tick.map({ Deadline(due: nil, tick: $0) }) else { return false }
            if let tick { deadline.tick = tick }
            let earliest = s.deadlines.values.compactMap(\.due).min()
            deadline.due = due
            s.deadlines[id] = deadline
            return due.map { new in earliest.map { new < $0 } ?? true } ?? false
        }
        if sooner { wake() }
    }

    fileprivate func remove(_ id: Int) {
        _ = state.withLock { $0.deadlines.removeValue(forKey: id) }
    }

    /// Starts the loop's thread.
    package func start() {
        SystemScheduler.system.startThread(named: "service") { [self] in
            run()
            ended.open()
        }
    }

    /// Ends the loop and waits until its thread has (a tick or round under way finishes first).
    package func stop() {
        state.withLock { $0.stopping = true }
        wake()
        ended.wait()
    }

    private func wake() { wakePipe.wake() }

    private func run() {
        while true {
            let (sources, due, stopping) = state.withLock { s in
                (s.sources, s.deadlines.values.compactMap(\.due).min(), s.stopping)
            }
            if stopping { return }
            var entries = [PollEntry(wakePipe.readEnd, waitingFor: .readable)]
                + sources.map { PollEntry($0.fd, waitingFor: .readable) }
            let timeout = due.map { Int32(clamping: Int(max(0, ($0 - monotonic) * 1000).rounded(.up))) }
            let ready: Int
            do {
                ready = try Poll.wait(&entries, milliseconds: timeout)
            } catch {
                preconditionFailure("poll in the service loop: \(error.description)")
            }
            if ready > 0 {
                if !entries[0].returned.isEmpty { wakePipe.drain() }
                for (index, source) in sources.enumerated() where !entries[index + 1].returned.isEmpty && !source.readable() {
                    state.withLock { $0.sources.removeAll { $0.fd == source.fd } }
                }
            }
            runDue()
        }
    }

    /// Ticks every deadline that has come, each once (its due cleared before its tick, which may set the next).
    private func runDue() {
        let now = monotonic
        let due = state.withLock { s -> [@Sendable () -> Void] in
            var ticks: [@Sendable () -> Void] = []
            for (id, deadline) in s.deadlines {
                guard let at = deadline.due, at <= now else { continue }
                s.deadlines[id]?.due = nil
                ticks.append(deadline.tick)
            }
            return ticks
        }
        for tick in due { tick() }
    }

    /// One owner's deadline on the loop.
    private final class Ticker: DeadlineTicker {
        let loop: ServiceLoop
        let id: Int

        init(loop: ServiceLoop, id: Int) {
            self.loop = loop
            self.id = id
        }

        func start(name: String, tick: @escaping @Sendable () -> Void) { loop.set(id, due: nil, tick: tick) }

        func wake(in seconds: Double?) { loop.set(id, due: seconds.map { [loop] in loop.monotonic + $0 }) }

        func stop() { loop.remove(id) }
    }
}
