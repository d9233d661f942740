import Foundation

/// Waits (10 s at most) until `condition` holds, yielding the processor meanwhile: for a test that
/// waits on another thread's progress with a deadline, never a bare sleep. False when it never did.
func spinUntil(_ condition: () -> Bool) -> Bool {
    let deadline = Date().addingTimeInterval(10)
    while !condition() {
        guard Date() < deadline else { return false }
        sched_yield()
    }
    return true
}
