/// How fast one upload goes now and when it should end, from the byte counts libcurl's
/// progress callback reports. The rate is taken over the last few seconds, not since the
/// start: a link that slows down, or a throttle that changes, shows in the ETA within
/// seconds, and a stalled upload's rate falls toward zero even when no callback comes.
/// Pure: times are monotonic seconds passed in.
package struct TransferMeter: Sendable, Equatable {
    /// Seconds of history the rate is taken over.
    package static let window = 5.0
    /// At most one sample per this many seconds (libcurl calls back every few milliseconds).
    static let resolution = 0.25

    struct Sample: Sendable, Equatable {
        var at: Double
        var bytes: Int64
    }

    package let size: Int64
    package private(set) var sent: Int64 = 0
    /// Oldest first; the first one is the baseline the rate is measured from.
    private(set) var samples: [Sample]

    package init(size: Int64, startedAt: Double) {
        self.size = size
        samples = [Sample(at: startedAt, bytes: 0)]
    }

    /// libcurl reported `bytes` sent so far at `now`.
    package mutating func record(_ bytes: Int64, at now: Double) {
        sent = bytes
        if let last = samples.last, now - last.at < Self.resolution { return }
        samples.append(Sample(at: now, bytes: bytes))
        // Keep one sample at or before the window's start, as the baseline.
        while samples.count > 2, samples[1].at <= now - Self.window { samples.removeFirst() }
    }

    /// Bytes per second over the last `window` seconds up to `now`. In the first second the
    /// bytes are spread over a whole second: what fills the socket's buffer at once is not the
    /// link's speed, and an ETA that starts long and shrinks reads better than one that jumps up.
    package func rate(at now: Double) -> Double {
        let baseline = samples.last(where: { $0.at <= now - Self.window }) ?? samples[0]
        let elapsed = max(now - baseline.at, Self.shortest)
        return max(0, Double(sent - baseline.bytes) / elapsed)
    }

    /// The shortest span a rate is taken over.
    static let shortest = 1.0

    /// Whole seconds left at the current rate, rounded up; nil while nothing moves.
    package func eta(at now: Double) -> Int? {
        let left = max(0, size - sent)
        if left == 0 { return 0 }
        let rate = rate(at: now)
        guard rate > 0 else { return nil }
        return Int((Double(left) / rate).rounded(.up))
    }
}
