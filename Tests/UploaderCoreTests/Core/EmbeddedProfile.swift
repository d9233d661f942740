import Foundation
@testable import UploaderSupport
@testable import UploaderConfig
@testable import UploaderSpool
@testable import UploaderTransfer
@testable import UploaderWatch
@testable import UploaderCore
@testable import UploaderDaemon
@testable import UploaderCommands

/// Drives `ProfileCore.step` by hand, in the manner of swift-nio's `EmbeddedEventLoop`: the
/// test is the runner. It sends events, reads the effects, answers them as it likes (a
/// scripted server, a probe that fails), and moves time forward; nothing sleeps.
struct EmbeddedProfile {
    var state: ProfileState
    let policy: ProfilePolicy
    private(set) var now: Instant
    /// Every effect so far, in order.
    private(set) var effects: [ProfileEffect] = []

    init(policy: ProfilePolicy, seed: UInt64 = 1, start: Date = Date(timeIntervalSince1970: 1_800_000_000)) {
        self.policy = policy
        now = Instant(wall: start, mono: 1000)
        state = ProfileState(seed: seed, onceCutoff: policy.mode == .once ? start : nil)
    }

    static func daemon(concurrency: Int = 4, claimAhead: Int = 16, maxAttempts: Int = 5, backoff: TimeInterval = 30,
                       maxBackoff: TimeInterval = 3600) -> EmbeddedProfile {
        EmbeddedProfile(policy: ProfilePolicy(mode: .daemon, concurrency: concurrency, claimAhead: claimAhead,
                                              maxAttempts: maxAttempts, backoff: backoff, maxBackoff: maxBackoff))
    }

    /// Sends one event; returns the effects of that step.
    @discardableResult
    mutating func send(_ event: ProfileEvent) -> [ProfileEffect] {
        let (next, new) = ProfileCore.step(state, event, policy: policy, now: now)
        state = next
        effects += new
        return new
    }

    /// Moves both clocks forward and lets timers fire.
    @discardableResult
    mutating func advance(by seconds: Double) -> [ProfileEffect] {
        now = now.adding(seconds)
        return send(.tick)
    }

    /// The wall clock is set forward or back (an operator, NTP); monotonic time goes on. Sends a tick.
    @discardableResult
    mutating func jumpWall(by seconds: Double) -> [ProfileEffect] {
        now = Instant(wall: now.wall.addingTimeInterval(seconds), mono: now.mono)
        return send(.tick)
    }

    /// Moves forward to the next timer the core asked for (if any).
    @discardableResult
    mutating func advanceToNextDeadline() -> [ProfileEffect] {
        guard let wait = ProfileCore.nextDeadline(state, policy: policy, now: now) else { return [] }
        return advance(by: wait)
    }

    /// Answers every `claim` in `effects` with `.ready`; returns the effects of those steps.
    @discardableResult
    mutating func claimAll(_ effects: [ProfileEffect]) -> [ProfileEffect] {
        var out: [ProfileEffect] = []
        for case .claim(let path) in effects { out += send(.claimed(path, .ready)) }
        return out
    }

    /// Sends the start-up scan with `names` in the outbox and answers their claims.
    @discardableResult
    mutating func recover(_ names: [String]) -> [ProfileEffect] {
        let first = send(.recovered(files: names.map { QueuedFile(RelativePath($0)) }, retries: [], ignoredDirectories: []))
        return first + claimAll(first)
    }
}

extension Array where Element == ProfileEffect {
    var uploads: [RelativePath] { compactMap { if case .upload(let p, _) = $0 { p } else { nil } } }
    var claims: [RelativePath] { compactMap { if case .claim(let p) = $0 { p } else { nil } } }
    var claimsInSlots: [RelativePath] { compactMap { if case .claimAndUpload(let p, _) = $0 { p } else { nil } } }
    var probes: [ProbeTicket] { compactMap { if case .probe(let t) = $0 { t } else { nil } } }
    var moveBacks: [RelativePath] { compactMap { if case .moveBack(let p) = $0 { p } else { nil } } }
    var settlements: [Settlement] { compactMap { if case .settle(_, let s) = $0 { s } else { nil } } }
    var cancelled: [RelativePath] { flatMap { effect -> [RelativePath] in if case .cancelUploads(let p) = effect { p } else { [] } } }
    var logLines: [LogLine] { compactMap { if case .log(let l) = $0 { l } else { nil } } }
    func logged(_ message: String) -> [LogLine] { logLines.filter { $0.message == message } }
}

extension AttemptReport {
    static func outcome(_ outcome: AttemptOutcome, attempts: Int = 1) -> AttemptReport {
        AttemptReport(outcome: outcome, countedAttempts: attempts, size: 100, bytesSent: 100, seconds: 0.1, id: "id")
    }
}
