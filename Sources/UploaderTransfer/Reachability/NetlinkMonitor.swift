@preconcurrency import Glibc
import CSysShims
import Foundation
import Synchronization
import UploaderSupport
import UploaderConfig

/// Hears the kernel say the network changed (rtnetlink link, address and route groups) and
/// tells every listener, so an offline profile probes at once instead of at its next backoff. It
/// has no thread: the daemon's `ServiceLoop` polls its socket.
package final class NetlinkMonitor: Sendable {
    /// Who is told, by the id `addListener` gave them.
    private struct Listeners {
        var byID: [Int: @Sendable () -> Void] = [:]
        var nextID = 1
    }

    private let listeners = Mutex(Listeners())
    private let logger: Logger

    package init(logger: Logger) { self.logger = logger }

    /// Opens the socket, non-blocking, for a loop that polls it (`readAvailable` when it is
    /// readable); nil when it cannot be opened: logged, and probes still run on their backoff.
    package func open() -> Int32? {
        let fd = uploader_open_rtnetlink()
        guard fd >= 0 else {
            logger.warn("cannot open rtnetlink socket; network changes are noticed by probing only", ["error": Errno.current.description])
            return nil
        }
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        return fd
    }

    @discardableResult
    package func addListener(_ listener: @escaping @Sendable () -> Void) -> Int {
        listeners.withLock { listeners in
            let id = listeners.nextID
            listeners.nextID += 1
            listeners.byID[id] = listener
            return id
        }
    }

    package func removeListener(_ id: Int) {
        listeners.withLock { _ = $0.byID.removeValue(forKey: id) }
    }

    /// Reads every message waiting on `fd` (from `open`) and tells the listeners once, as one
    /// change (lost messages count as one too); false once the socket has failed (then it is closed).
    package func readAvailable(_ fd: Int32) -> Bool {
        var buffer = [UInt8](repeating: 0, count: 16384)
        var changed = false
        while true {
            let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n >= 0 {
                changed = true
                continue
            }
            switch Errno.current {
            case .interrupted: continue
            case .noBufferSpace: changed = true; continue
            case .wouldBlock:
                if changed { notify() }
                return true
            default:
                if changed { notify() }
                logger.warn("rtnetlink socket failed; network changes are noticed by probing only", ["error": Errno.current.description])
                close(fd)
                return false
            }
        }
    }

    private func notify() {
        let all = listeners.withLock { Array($0.byID.values) }
        for listener in all { listener() }
    }
}
