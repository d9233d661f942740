import Foundation

/// A profile's view of its destination: online or offline, and the prober that brings it back.
///
/// Goes offline when an upload could not connect; then probes (TCP connect) with backoff
/// from 1 s to 30 s, and at once whenever the kernel reports a network change. While online,
/// a network change triggers one probe too, so a link that goes down is noticed before a
/// stalled upload times out. Transitions are reported through `onChange`.
package final class ReachabilityMonitor: @unchecked Sendable {
    private let condition = NSCondition()
    private let probe: TCPProbe?
    private let logger: Logger
    private let profile: String
    private var online = true
    private var offlineSince: Date?
    private var lastError: String?
    private var wake = false
    private var stopped = false
    private var onChange: (@Sendable (Bool) -> Void)?

    package init(probe: TCPProbe?, profile: String, logger: Logger) {
        self.probe = probe
        self.profile = profile
        self.logger = logger
    }

    package var isOnline: Bool {
        condition.lock(); defer { condition.unlock() }
        return online
    }

    package var lastProblem: String? {
        condition.lock(); defer { condition.unlock() }
        return lastError
    }

    package func start(onChange: @escaping @Sendable (Bool) -> Void) {
        condition.lock(); self.onChange = onChange; condition.unlock()
        let thread = Thread { [self] in self.run() }
        thread.name = "probe"
        thread.start()
    }

    package func stop() {
        condition.lock(); stopped = true; condition.broadcast(); condition.unlock()
    }

    /// An upload could not reach the destination.
    package func reportUnreachable(_ reason: String) {
        condition.lock()
        let changed = online
        if online {
            online = false
            offlineSince = Date()
            logger.warn("destination unreachable; profile paused, files stay queued", ["profile": profile, "error": reason])
        }
        lastError = reason
        condition.broadcast()
        let callback = onChange
        condition.unlock()
        if changed { callback?(false) }
    }

    /// The kernel says the network changed: probe now.
    package func networkChanged() {
        condition.lock(); wake = true; condition.broadcast(); condition.unlock()
    }

    private func run() {
        var delay: TimeInterval = 1
        condition.lock()
        while !stopped {
            if online {
                while online && !wake && !stopped { condition.wait() }
                if stopped { break }
                if online && wake {
                    wake = false
                    condition.unlock()
                    let problem = probe?.check()
                    if let problem { reportUnreachable(problem) }
                    condition.lock()
                }
                delay = 1
                continue
            }
            _ = condition.wait(until: Date().addingTimeInterval(delay))
            if stopped { break }
            wake = false
            condition.unlock()
            let problem = probe?.check()
            condition.lock()
            if let problem {
                lastError = problem
                delay = min(30, delay * 2)
                continue
            }
            let outFor = offlineSince.map { Date().timeIntervalSince($0) } ?? 0
            online = true
            offlineSince = nil
            delay = 1
            logger.info("destination reachable again; resuming", ["profile": profile, "offline_seconds": String(format: "%.1f", outFor)])
            let callback = onChange
            condition.unlock()
            callback?(true)
            condition.lock()
        }
        condition.unlock()
    }
}
