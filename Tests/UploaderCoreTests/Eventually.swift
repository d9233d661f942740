import Foundation
import Testing

/// Waits for other threads to get somewhere — a condition, never a length of time: checks
/// `condition` until it holds, and records an issue naming `what` if it has not within 10 s.
@discardableResult
func eventually(_ what: String, _ condition: () -> Bool) -> Bool {
    let deadline = Date().addingTimeInterval(10)
    while !condition() {
        if Date() > deadline {
            Issue.record("never happened: \(what)")
            return false
        }
        usleep(500)
    }
    return true
}
