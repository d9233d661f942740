@preconcurrency import Glibc
import CInotifyTools
import CSysShims
import Foundation

/// Watches outboxes with libinotifytools from one dedicated thread.
///
/// libinotifytools keeps global state, is not thread-safe and exposes no file descriptor,
/// so exactly one thread owns it: registrations are queued to that thread, events are
/// copied out of the library's buffer at once and handed to each outbox's handler.
package final class InotifyWatcher: @unchecked Sendable {
    package typealias Handler = @Sendable (WatchEvent) -> Void

    private struct Registration {
        let id: Int
        let root: String
        let recursive: Bool
        let handler: Handler
    }

    private enum Command {
        case add(Registration)
        case remove(Int)
    }

    private let logger: Logger
    private let lock = NSLock()
    private var commands: [Command] = []
    private var stopping = false
    private var nextID = 1
    private var thread: Thread?
    private let started = DispatchSemaphore(value: 0)
    private var startError: String?

    // Owned by the watcher thread only.
    private var registrations: [Int: Registration] = [:]
    private var watches: [Int32: (registration: Int, directory: RelativePath)] = [:]
    /// Files seen by CREATE only (maybe `link()`ed in): checked again until written or settled.
    private var pendingCreates: [RelativePath: (registration: Int, seen: Double)] = [:]
    private var lostRoots: Set<Int> = []

    private static let mask = UInt32(IN_CLOSE_WRITE) | UInt32(IN_MOVED_TO) | UInt32(IN_CREATE)
        | UInt32(IN_DELETE_SELF) | UInt32(IN_MOVE_SELF)

    package init(logger: Logger) { self.logger = logger }

    /// Starts the watcher thread; throws if inotify cannot be initialised.
    package func start() throws {
        let thread = Thread { [self] in self.run() }
        thread.name = "inotify"
        self.thread = thread
        thread.start()
        started.wait()
        if let startError { throw WatcherError(message: startError) }
    }

    package struct WatcherError: Error, CustomStringConvertible {
        package let message: String
        package var description: String { message }
    }

    /// Adds an outbox; returns an id for `remove`. Takes effect within a second.
    @discardableResult
    package func add(root: String, recursive: Bool, handler: @escaping Handler) -> Int {
        lock.lock(); defer { lock.unlock() }
        let id = nextID
        nextID += 1
        commands.append(.add(Registration(id: id, root: root, recursive: recursive, handler: handler)))
        return id
    }

    package func remove(_ id: Int) {
        lock.lock(); commands.append(.remove(id)); lock.unlock()
    }

    package func stop() {
        lock.lock(); stopping = true; lock.unlock()
    }

    private func run() {
        if inotifytools_initialize() == 0 {
            startError = "cannot initialise inotify: \(String(cString: strerror(inotifytools_error())))"
            started.signal()
            return
        }
        // Outboxes registered before start are watched before `start` returns, so a
        // scan made after it cannot miss a file that arrives in between.
        lock.lock()
        let initial = commands
        commands.removeAll()
        lock.unlock()
        for command in initial { apply(command) }
        started.signal()
        while true {
            lock.lock()
            let pending = commands
            commands.removeAll()
            let stop = stopping
            lock.unlock()
            if stop { break }
            for command in pending { apply(command) }
            checkLostRoots()
            checkPendingCreates()
            guard let event = inotifytools_next_event(1) else { continue }
            handle(event)
        }
        inotifytools_cleanup()
    }

    private func apply(_ command: Command) {
        switch command {
        case .add(let registration):
            registrations[registration.id] = registration
            watchTree(registration, directory: RelativePath(bytes: []), announce: false)
        case .remove(let id):
            registrations[id] = nil
            for (wd, watch) in watches where watch.registration == id {
                inotifytools_remove_watch_by_wd(wd)
                watches[wd] = nil
            }
        }
    }

    /// Watches `directory` (relative to the registration root) and, when recursive, every directory below.
    private func watchTree(_ registration: Registration, directory: RelativePath, announce: Bool) {
        let ok: Bool = directory.withCString(in: registration.root) { cpath in
            guard inotifytools_watch_file(cpath, Int32(bitPattern: InotifyWatcher.mask)) != 0 else { return false }
            var wd = inotifytools_wd_from_filename(cpath)
            if wd < 0 {
                let withSlash = String(cString: cpath) + "/"
                wd = inotifytools_wd_from_filename(withSlash)
            }
            if wd >= 0 { watches[wd] = (registration.id, directory) }
            logger.debug("watching", ["dir": String(cString: cpath), "wd": String(wd)])
            return wd >= 0
        }
        if !ok {
            let code = inotifytools_error()
            if directory.bytes.isEmpty {
                lostRoots.insert(registration.id)
                logger.warn("cannot watch outbox; will retry", ["dir": registration.root, "error": String(cString: strerror(code))])
            } else {
                logger.warn("cannot watch directory", ["dir": directory.displayed(in: registration.root), "error": String(cString: strerror(code))])
            }
            return
        }
        if announce { registration.handler(.directoryAppeared(directory)) }
        guard registration.recursive else { return }
        guard let entries = try? FileSystem.list(directory, in: registration.root) else { return }
        for entry in entries where entry.name.bytes.first != UInt8(ascii: ".") {
            let child = directory.appending(entry.name)
            let kind = entry.kind ?? (try? FileSystem.status(child, in: registration.root))?.kind
            if kind == .directory { watchTree(registration, directory: child, announce: announce) }
        }
    }

    /// An outbox that vanished is recreated (mode 0750) and watched again, then rescanned.
    private func checkLostRoots() {
        guard !lostRoots.isEmpty else { return }
        for id in lostRoots {
            guard let registration = registrations[id] else { lostRoots.remove(id); continue }
            if (try? FileSystem.makeDirectories(registration.root)) != nil {
                lostRoots.remove(id)
                watchTree(registration, directory: RelativePath(bytes: []), announce: false)
                if !lostRoots.contains(id) {
                    logger.warn("outbox was removed or replaced; recreated it and rescanning", ["dir": registration.root])
                    registration.handler(.rescanNeeded("outbox recreated"))
                }
            }
        }
    }

    private func handle(_ eventPointer: UnsafeMutablePointer<inotify_event>) {
        let wd = eventPointer.pointee.wd
        let mask = eventPointer.pointee.mask
        let length = Int(eventPointer.pointee.len)
        var name: [UInt8] = []
        if length > 0 {
            let raw = UnsafeRawPointer(eventPointer) + MemoryLayout<inotify_event>.size
            let bytes = UnsafeBufferPointer(start: raw.assumingMemoryBound(to: UInt8.self), count: length)
            name = Array(bytes.prefix(while: { $0 != 0 }))
        }
        if mask & UInt32(IN_Q_OVERFLOW) != 0 {
            logger.warn("inotify queue overflowed; rescanning every outbox")
            for registration in registrations.values { registration.handler(.rescanNeeded("inotify queue overflow")) }
            return
        }
        logger.debug("inotify event", ["wd": String(wd), "mask": String(mask, radix: 16), "name": RelativePath(bytes: name).logSafe])
        guard let watch = watches[wd], let registration = registrations[watch.registration] else { return }
        if mask & (UInt32(IN_DELETE_SELF) | UInt32(IN_MOVE_SELF) | UInt32(IN_IGNORED)) != 0 {
            inotifytools_remove_watch_by_wd(wd)
            watches[wd] = nil
            if watch.directory.bytes.isEmpty { lostRoots.insert(registration.id) }
            return
        }
        guard !name.isEmpty else { return }
        let path = watch.directory.appending(RelativePath(bytes: name))
        if mask & UInt32(IN_ISDIR) != 0 {
            if mask & (UInt32(IN_CREATE) | UInt32(IN_MOVED_TO)) != 0 {
                if registration.recursive {
                    watchTree(registration, directory: path, announce: true)
                } else {
                    registration.handler(.directoryAppeared(path))
                }
            }
            return
        }
        if mask & (UInt32(IN_CLOSE_WRITE) | UInt32(IN_MOVED_TO)) != 0 {
            pendingCreates[path] = nil
            registration.handler(.fileReady(path))
        } else if mask & UInt32(IN_CREATE) != 0 {
            // A symlink, FIFO, socket or device gets no CLOSE_WRITE: pass it on now (lstat only,
            // never opened) so the claimer refuses it with its one warning line.
            if let status = try? FileSystem.status(path, in: registration.root), status.kind != .regular {
                registration.handler(.fileReady(path))
            } else {
                pendingCreates[path] = (registration.id, monotonicSeconds())
            }
        }
    }

    /// A file announced only by CREATE (e.g. `link()`, as sftp-server finishes uploads) is
    /// ready once nobody has it open for writing: a read lease succeeds only then. Where a
    /// lease cannot be taken (not our file, not root), a file unchanged for 2 s counts as ready.
    private func checkPendingCreates() {
        guard !pendingCreates.isEmpty else { return }
        let now = monotonicSeconds()
        for (path, entry) in pendingCreates where now - entry.seen >= 0.5 {
            guard let registration = registrations[entry.registration] else { pendingCreates[path] = nil; continue }
            let fd: Int32
            do {
                fd = try FileSystem.openForReading(path, in: registration.root)
            } catch {
                // Gone: forget it. Swapped for a symlink, or unreadable: the claimer says why.
                pendingCreates[path] = nil
                if (error as? SystemError)?.isNotFound != true { registration.handler(.fileReady(path)) }
                continue
            }
            defer { close(fd) }
            guard let status = try? FileSystem.status(fd: fd, path: ""), status.kind == .regular else {
                pendingCreates[path] = nil
                registration.handler(.fileReady(path))
                continue
            }
            var ready = false
            if uploader_try_read_lease(fd) == 0 {
                _ = uploader_release_lease(fd)
                ready = true
            } else if errno != EAGAIN && errno != EWOULDBLOCK {
                ready = Date().timeIntervalSince(status.mtime) >= 2
            }
            if ready {
                pendingCreates[path] = nil
                registration.handler(.fileReady(path))
            } else if now - entry.seen > 3600 {
                pendingCreates[path] = nil
            }
        }
    }
}

/// Seconds on the monotonic clock.
package func monotonicSeconds() -> Double {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
}
