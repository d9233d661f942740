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
    private let groups = Mutex<[[UInt8]: Group]>([:])
    private let fs: any SpoolFileSystem

    package init(fs: any SpoolFileSystem = LocalFileSystem()) { self.fs = fs }

    /// Makes the directory holding `name` inside `directory` durable.
    package func syncDirectory(of name: RelativePath, in directory: String) throws {
        var key = Array(directory.utf8)
        if let parent = name.parent { key += [UInt8(ascii: "/")] + parent.bytes }
        let group = groups.withLock { groups in
            if let known = groups[key] { return known }
            let fresh = Group()
            groups[key] = fresh
            return fresh
        }
        try group.sync { try fs.syncDirectory(of: name, in: directory) }
    }
}

/// The requests for one directory: how many were made, how many an fsync has covered.
private final class Group: @unchecked Sendable {
    // Every field is read and written with `condition` locked.
    private let condition = NSCondition()
    private var requested = 0
    private var completed = 0
    private var running = false
    private var error: SystemError?

    func sync(_ fsync: () throws -> Void) throws {
        condition.lock()
        requested += 1
        let ticket = requested
        while true {
            if completed >= ticket {
                let failure = error
                condition.unlock()
                if let failure { throw failure }
                return
            }
            if running {
                condition.wait()
                continue
            }
            // Run one fsync for every request made so far.
            let target = requested
            running = true
            condition.unlock()
            var failure: SystemError?
            do { try fsync() } catch let caught as SystemError { failure = caught } catch {}
            condition.lock()
            running = false
            completed = target
            error = failure
            condition.broadcast()
        }
    }
}
