@preconcurrency import Glibc
import Foundation

/// Group commit for directory fsyncs: workers that need the same directory made durable
/// at about the same time share one `fsync` instead of queueing one each.
///
/// A caller's renames are covered by any fsync of that directory that *starts* after the
/// call; so a caller waits for the fsync in progress (which may have started too early)
/// only if no later one is due, and the next fsync serves everyone who asked meanwhile.
package final class DirectorySyncer: @unchecked Sendable {
    private struct Slot {
        var requested = 0
        var completed = 0
        var running = false
        var error: SystemError?
    }

    private let condition = NSCondition()
    private var slots: [[UInt8]: Slot] = [:]
    private let fs: any SpoolFileSystem

    package init(fs: any SpoolFileSystem = LocalFileSystem()) { self.fs = fs }

    /// Makes the directory holding `name` inside `directory` durable.
    package func syncDirectory(of name: RelativePath, in directory: String) throws {
        var key = Array(directory.utf8)
        if let parent = name.parent { key += [UInt8(ascii: "/")] + parent.bytes }
        condition.lock()
        var slot = slots[key] ?? Slot()
        slot.requested += 1
        let ticket = slot.requested
        slots[key] = slot
        while true {
            let current = slots[key]!
            if current.completed >= ticket {
                let error = current.error
                condition.unlock()
                if let error { throw error }
                return
            }
            if current.running {
                condition.wait()
                continue
            }
            // Run one fsync for every request made so far.
            let target = current.requested
            slots[key]!.running = true
            condition.unlock()
            var failure: SystemError?
            do { try fs.syncDirectory(of: name, in: directory) } catch let error as SystemError { failure = error } catch {}
            condition.lock()
            slots[key]!.running = false
            slots[key]!.completed = target
            slots[key]!.error = failure
            condition.broadcast()
        }
    }
}
