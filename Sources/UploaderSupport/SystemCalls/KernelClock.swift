@preconcurrency import Glibc

/// The kernel's monotonic clock (CLOCK_MONOTONIC): read, and slept on to an absolute time.
package enum KernelClock {
    /// Seconds since an arbitrary start; never goes back, not stepped by NTP.
    package static var monotonicSeconds: Double {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
    }

    /// Sleeps until `monotonicSeconds` reaches `deadline` (a signal's interruption sleeps on).
    package static func sleep(until deadline: Double) {
        let whole = deadline.rounded(.down)
        var until = timespec(tv_sec: Int(whole), tv_nsec: Int((deadline - whole) * 1e9))
        while clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &until, nil) == Errno.interrupted.rawValue {}
    }
}
