@preconcurrency import Glibc
import CInotifyTools
import CSysShims
import Foundation
import UploaderSupport
import UploaderConfig

/// What the watcher thread knows: the outboxes registered, the directories watched, files seen
/// by CREATE only, outboxes lost. Only that thread makes and uses one (libinotifytools is not
/// thread-safe), so it needs no lock and is not `Sendable`.
final class WatchTable {
    struct Registration: Sendable {
        let id: Int
        let root: String
        let recursive: Bool
        /// A root that vanishes is made again (an outbox); else it is watched again once it is back.
        let recreate: Bool
        let handler: InotifyWatcher.Handler
    }

    enum Command: Sendable {
        case add(Registration)
        case remove(Int)
    }

    private var registrations: [Int: Registration] = [:]
    /// Watched directories by the path libinotifytools keeps for them (with a trailing `/`).
    /// Keyed by path, not wd: after an outbox is deleted and recreated, the library may
    /// still answer the old wd for its name, while events carry the new one.
    private var watches: [[UInt8]: (registration: Int, directory: RelativePath)] = [:]
    /// A file seen by CREATE only (maybe `link()`ed in), or listed in a directory that just
    /// appeared: looked at again until it is closed after writing or has settled.
    private struct PendingCreate {
        var registration: Int
        var seen: Double
        /// When it is next looked at.
        var checkAt: Double
        /// Found by listing a new directory, not by its CREATE: looked at with lstat alone (a lease
        /// needs an open), so a directory of many thousand files moved in is not opened file by
        /// file; its files are older than the 2 s anyway.
        var listed = false
    }
    private var pendingCreates: [RelativePath: PendingCreate] = [:]
    private var lostRoots: Set<Int> = []
    /// Lost outboxes whose recreation failed and has been reported (once per loss).
    private var unrecreatable: Set<Int> = []

    /// A file seen by CREATE alone is first looked at this long after (seconds).
    private static let pendingCheckAfter = 0.5

    private static let mask = UInt32(IN_CLOSE_WRITE) | UInt32(IN_MOVED_TO) | UInt32(IN_CREATE)
        | UInt32(IN_DELETE_SELF) | UInt32(IN_MOVE_SELF)

    private let logger: Logger
    private let clock: any Clock

    init(logger: Logger, clock: any Clock) {
        self.logger = logger
        self.clock = clock
    }

    /// Carries out one registration change asked for by another thread.
    func apply(_ command: Command) {
        switch command {
        case .add(let registration):
            registrations[registration.id] = registration
            watchTree(registration, directory: RelativePath(bytes: []), announce: false)
        case .remove(let id):
            registrations[id] = nil
            for (key, watch) in watches where watch.registration == id {
                var cpath = key.map { CChar(bitPattern: $0) }
                cpath.append(0)
                inotifytools_remove_watch_by_filename(cpath)
                watches[key] = nil
            }
        }
    }

    /// Watches `directory` (relative to the registration root) and, when recursive, every directory below.
    private func watchTree(_ registration: Registration, directory: RelativePath, announce: Bool) {
        guard watch(registration, directory: directory, announce: announce), registration.recursive else { return }
        // Each directory is watched before it is listed, so nothing created meanwhile goes unseen.
        DirectoryWalker(root: registration.root, logger: logger).walk(from: directory) { entry in
            entry.kind == .directory && watch(registration, directory: entry.path, announce: announce)
        }
    }

    /// Adds the watch on one directory (and announces it); false when inotify refused it.
    private func watch(_ registration: Registration, directory: RelativePath, announce: Bool) -> Bool {
        let ok: Bool = directory.withCString(in: registration.root) { cpath in
            guard inotifytools_watch_file(cpath, Int32(bitPattern: WatchTable.mask)) != 0 else { return false }
            var key = Array(UnsafeBufferPointer(start: UnsafeRawPointer(cpath).assumingMemoryBound(to: UInt8.self), count: strlen(cpath)))
            if key.last != UInt8(ascii: "/") { key.append(UInt8(ascii: "/")) }
            watches[key] = (registration.id, directory)
            logger.debug("watching", ["dir": directory.bytes.isEmpty ? registration.root : directory.displayed(in: registration.root)])
            return true
        }
        if !ok {
            let code = inotifytools_error()
            if directory.bytes.isEmpty && registration.recreate {
                lostRoots.insert(registration.id)
                logger.warn("cannot watch outbox; will retry", ["dir": registration.root, "error": Errno(rawValue: code).description])
            } else if directory.bytes.isEmpty {
                logger.warn("cannot watch directory; a change in it goes unseen", ["dir": registration.root, "error": Errno(rawValue: code).description])
            } else {
                logger.warn("cannot watch directory", ["dir": directory.displayed(in: registration.root), "error": Errno(rawValue: code).description])
            }
            return false
        }
        if announce {
            holdFiles(of: registration, in: directory)
            registration.handler(.directoryAppeared(directory))
        }
        return true
    }

    /// The files of a directory that appeared while we run were created before its watch, and a
    /// producer may still be writing one: each waits as a pending create (ready once closed, or
    /// once settled where no lease tells), as a file seen by CREATE alone does. Anything else is
    /// passed on now, for the claimer to refuse with its reason.
    private func holdFiles(of registration: Registration, in directory: RelativePath) {
        var held = 0
        DirectoryWalker(root: registration.root, logger: logger).walk(from: directory) { entry in
            switch entry.kind {
            case .directory?, nil:
                break
            case .regular?:
                // Checked at the watcher's next turn: a closed file of ours goes on at once.
                pendingCreates[entry.path] = PendingCreate(registration: registration.id, seen: clock.monotonic,
                                                           checkAt: clock.monotonic, listed: true)
                held += 1
            default:
                registration.handler(.fileReady(entry.path))
            }
            return false
        }
        logger.log(.debug, "new directory; its files are claimed once closed",
                   pairs: [("dir", directory.displayed(in: registration.root)), ("files", String(held))])
    }

    /// An outbox that vanished is recreated (mode 0750) and watched again, then rescanned.
    func checkLostRoots() {
        guard !lostRoots.isEmpty else { return }
        for id in lostRoots {
            guard let registration = registrations[id] else { lostRoots.remove(id); continue }
            guard registration.recreate else {
                // Not ours to make: watched again once it is back (replaced by a rename), and its
                // handler told, since what it holds may have changed meanwhile. A hint: not back
                // (or not a directory) yet is looked at again at the next check, a second later.
                guard let kind = try? FileSystem.statusFollowingLinks(path: registration.root).kind, kind == .directory else { continue }
                lostRoots.remove(id)
                if watch(registration, directory: RelativePath(bytes: []), announce: false) {
                    registration.handler(.rescanNeeded("directory back"))
                }
                continue
            }
            do {
                try FileSystem.makeDirectories(registration.root)
            } catch {
                // Tried again each second; said once, until the outbox is back.
                if unrecreatable.insert(id).inserted {
                    logger.error("outbox was removed and cannot be recreated; nothing arrives until it is back",
                                 ["dir": registration.root, "error": "\(error)"])
                }
                continue
            }
            unrecreatable.remove(id)
            lostRoots.remove(id)
            watchTree(registration, directory: RelativePath(bytes: []), announce: false)
            if !lostRoots.contains(id) {
                logger.warn("outbox was removed or replaced; recreated it and rescanning", ["dir": registration.root])
                registration.handler(.rescanNeeded("outbox recreated"))
            }
        }
    }

    /// One event from the library: the file or directory it names goes to its outbox's handler.
    func handle(_ eventPointer: UnsafeMutablePointer<inotify_event>) {
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
        guard let watchedPath = inotifytools_filename_from_wd(wd) else { return }
        var key = Array(UnsafeBufferPointer(start: UnsafeRawPointer(watchedPath).assumingMemoryBound(to: UInt8.self), count: strlen(watchedPath)))
        if key.last != UInt8(ascii: "/") { key.append(UInt8(ascii: "/")) }
        guard let watch = watches[key], let registration = registrations[watch.registration] else { return }
        if mask & (UInt32(IN_DELETE_SELF) | UInt32(IN_MOVE_SELF) | UInt32(IN_IGNORED)) != 0 {
            // After DELETE_SELF the kernel drops the watch by itself (asking the library to
            // remove it again only prints an error); a directory moved away keeps its watch,
            // which must go, or its events would look like the new outbox's.
            if mask & UInt32(IN_MOVE_SELF) != 0 { inotifytools_remove_watch_by_wd(wd) }
            watches[key] = nil
            if watch.directory.bytes.isEmpty { lostRoots.insert(registration.id) }
            return
        }
        guard !name.isEmpty else { return }
        let path = watch.directory.appending(RelativePath(bytes: name))
        if mask & UInt32(IN_ISDIR) != 0 {
            // Hidden directories (ours, `.upl-tmp`, or anyone's) are never watched or uploaded.
            if name.first == UInt8(ascii: ".") { return }
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
            // never opened) so the claimer refuses it with its one warning line. A hint: one gone
            // or unreadable waits as a pending create, whose check says why.
            if let status = try? FileSystem.status(path, in: registration.root), status.kind != .regular {
                registration.handler(.fileReady(path))
            } else {
                let now = clock.monotonic
                pendingCreates[path] = PendingCreate(registration: registration.id, seen: now, checkAt: now + Self.pendingCheckAfter)
            }
        }
    }

    /// A file announced only by CREATE (e.g. `link()`, as sftp-server finishes uploads) is
    /// ready once nobody has it open for writing: a read lease succeeds only then. Where a
    /// lease cannot be taken (not our file, not root), a file unchanged for 2 s counts as ready
    /// (its writer's CLOSE_WRITE, if it was still writing, ends the wait sooner).
    func checkPendingCreates() {
        guard !pendingCreates.isEmpty else { return }
        let now = clock.monotonic
        var ready: [Int: [RelativePath]] = [:]
        defer {
            for (id, paths) in ready { registrations[id]?.handler(.filesReady(paths)) }
        }
        for (path, entry) in pendingCreates where now >= entry.checkAt {
            pendingCreates[path]?.checkAt = now + Self.pendingCheckAfter
            guard let registration = registrations[entry.registration] else { pendingCreates[path] = nil; continue }
            if entry.listed {
                if checkListed(path, entry, registration) { ready[registration.id, default: []].append(path) }
                continue
            }
            let fd: Int32
            do {
                fd = try FileSystem.openForReading(path, in: registration.root)
            } catch {
                // Gone: forget it. Swapped for a symlink, or unreadable: the claimer says why.
                pendingCreates[path] = nil
                if (error as? SystemError)?.isNotFound != true { ready[registration.id, default: []].append(path) }
                continue
            }
            defer { close(fd) }
            // An fstat that fails passes the file on too: the claimer looks again and says why.
            guard let status = try? FileSystem.status(fd: fd, path: ""), status.kind == .regular else {
                pendingCreates[path] = nil
                ready[registration.id, default: []].append(path)
                continue
            }
            var settled = false
            if uploader_try_read_lease(fd) == 0 {
                _ = uploader_release_lease(fd)
                settled = true
            } else if Errno.current != .wouldBlock {
                settled = clock.now.timeIntervalSince(status.mtime) >= 2
            }
            if settled {
                pendingCreates[path] = nil
                ready[registration.id, default: []].append(path)
            } else if now - entry.seen > 3600 {
                pendingCreates[path] = nil
            }
        }
    }

    /// A file listed in a new directory: ready once it has been unchanged for 2 s (its writer's
    /// CLOSE_WRITE, if it was still writing, comes sooner).
    /// True when it is to be passed on (and no longer pending).
    private func checkListed(_ path: RelativePath, _ entry: PendingCreate, _ registration: Registration) -> Bool {
        let status: FileSystem.Status
        do {
            status = try FileSystem.status(path, in: registration.root)
        } catch {
            // Gone: forget it. Unreadable: the claimer says why.
            pendingCreates[path] = nil
            return (error as? SystemError)?.isNotFound != true
        }
        guard status.kind != .regular || clock.now.timeIntervalSince(status.mtime) >= 2 else { return false }
        pendingCreates[path] = nil
        return true
    }
}
