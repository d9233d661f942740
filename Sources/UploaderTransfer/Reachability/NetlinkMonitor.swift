@preconcurrency import Glibc
import CSysShims
import Foundation
import Synchronization
import UploaderSupport
import UploaderConfig

/// Hears the kernel say the network changed (rtnetlink link, address and route groups) and
/// tells every listener, so an offline profile probes at once instead of at its next backoff.
package final class NetlinkMonitor: Sendable {
    /// Who is told, by the id `addListener` gave them.
    private struct Listeners {
        var byID: [Int: @Sendable () -> Void] = [:]
        var nextID = 1
    }

    private let listeners = Mutex(Listeners())
    private let logger: Logger

    package init(logger: Logger) { self.logger = logger }

    /// Opens the socket and starts the listening thread; a failure is logged (probes still run on their backoff).
    package func start() {
        let fd = uploader_open_rtnetlink()
        guard fd >= 0 else {
            logger.warn("cannot open rtnetlink socket; network changes are noticed by probing only", ["error": Errno.current.description])
            return
        }
        let thread = Thread { [self] in self.run(reading: fd) }
        thread.name = "rtnetlink"
        thread.start()
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

    /// The listening thread's loop: one wake-up per message (or lost messages), until the socket fails.
    private func run(reading fd: Int32) {
        var buffer = [UInt8](repeating: 0, count: 16384)
        while true {
            let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n < 0 {
                if Errno.current == .interrupted || Errno.current == .noBufferSpace { notify(); continue }
                return
            }
            notify()
        }
    }

    private func notify() {
        let all = listeners.withLock { Array($0.byID.values) }
        for listener in all { listener() }
    }
}
