@preconcurrency import Glibc
import Foundation
import Synchronization

/// Group commit for directory fsyncs: workers that need the same directory made durable
/// at about the same time share one `fsync` instead of queueing one each.
///
/// A caller's renames are covered by any fsync of that directory that *starts* after the
/// call; so a caller waits for the fsync in progress (which may have started too early)
/// only if no later one is due, and the next fsync serves everyone who asked meanwhile.
/// Each directory has its own lock and condition: a finished fsync wakes only the callers
/// waiting for that directory.
package final class DirectorySyncer: Sendable {
    private let groups = Mutex<[[UInt8]: DirectorySyncGroup]>([:])
    private let fs: any SpoolFileSystem

    package init(fs: any SpoolFileSystem = LocalFileSystem()) { self.fs = fs }

    /// Makes the directory holding `name` inside `directory` durable.
    package func syncDirectory(of name: RelativePath, in directory: String) throws {
        var key = Array(directory.utf8)
        if let parent = name.parent { key += [UInt8(ascii: "/")] + parent.bytes }
        let group = groups.withLock { groups in
            if let known = groups[key] { return known }
            let fresh = DirectorySyncGroup()
            groups[key] = fresh
            return fresh
        }
        try group.sync { try fs.syncDirectory(of: name, in: directory) }
    }
}

/// The requests for one directory: how many were made, how many an fsync has covered, and
/// who waits for the fsync in progress. Each waiter has its own wake-up, which carries its
/// answer: an fsync that ends wakes only those it covered (they return without taking the lock
/// again) and the one caller that runs the next. A broadcast on one condition woke every waiter
/// into a fight for its mutex, and on two cores that fight is what cost.
final class DirectorySyncGroup: Sendable {
    private enum Turn: Sendable {
        /// Covered by an fsync that ended (with this error, if it failed).
        case done(SystemError?)
        /// Wait for the fsync in progress.
        case wait(Waiter)
        /// Run one fsync for every request made so far.
        case run(covering: Int)
    }

    private final class Waiter: Sendable {
        let ticket: Int
        let wake = DispatchSemaphore(value: 0)
        /// Set before `wake` is signalled: `.done` when covered, nil when it should try again.
        let answer = Mutex<Turn?>(nil)

        init(ticket: Int) { self.ticket = ticket }
    }

    private struct Requests: ~Copyable {
        var requested = 0
        var completed = 0
        var running = false
        var error: SystemError?
        var waiting: [Waiter] = []

        mutating func turn(for ticket: Int) -> Turn {
            if completed >= ticket { return .done(error) }
            if running {
                let waiter = Waiter(ticket: ticket)
                waiting.append(waiter)
                return .wait(waiter)
            }
            running = true
            return .run(covering: requested)
        }
    }

    private let requests = Mutex(Requests())

    init() {}

    /// Returns once an fsync that started after this call has ended (run by this caller or another).
    func sync(_ fsync: () throws -> Void) throws {
        var ticket = 0
        var turn: Turn = requests.withLock { requests in
            requests.requested += 1
            ticket = requests.requested
            return requests.turn(for: ticket)
        }
        while true {
            switch turn {
            case .done(let failure):
                if let failure { throw failure }
                return
            case .wait(let waiter):
                waiter.wake.wait()
                if let answer = waiter.answer.withLock({ $0 }) {
                    turn = answer
                } else {
                    turn = requests.withLock { $0.turn(for: ticket) }
                }
            case .run(let target):
                var failure: SystemError?
                do { try fsync() } catch let caught as SystemError { failure = caught } catch {}
                let (covered, next): ([Waiter], Waiter?) = requests.withLock { requests in
                    requests.running = false
                    requests.completed = target
                    requests.error = failure
                    let covered = requests.waiting.filter { $0.ticket <= target }
                    requests.waiting.removeAll { $0.ticket <= target }
                    // The first not covered runs the next fsync (unless a newcomer already does).
                    let next = requests.waiting.isEmpty ? nil : requests.waiting.removeFirst()
                    return (covered, next)
                }
                for waiter in covered {
                    waiter.answer.withLock { $0 = .done(failure) }
                    waiter.wake.signal()
                }
                next?.wake.signal()
                turn = .done(failure)
            }
        }
    }
}
