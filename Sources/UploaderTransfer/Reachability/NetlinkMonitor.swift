@preconcurrency import Glibc
import CSysShims
import Foundation
import UploaderSupport
import UploaderConfig

/// Hears the kernel say the network changed (rtnetlink link, address and route groups) and
/// tells every listener, so an offline profile probes at once instead of at its next backoff.
package final class NetlinkMonitor: @unchecked Sendable {
    private let lock = NSLock()
    private var listeners: [Int: @Sendable () -> Void] = [:]
    private var nextID = 1
    private var fd: Int32 = -1
    private let logger: Logger

    package init(logger: Logger) { self.logger = logger }

    /// Opens the socket and starts the listening thread; a failure is logged (probes still run on their backoff).
    package func start() {
        let fd = uploader_open_rtnetlink()
        guard fd >= 0 else {
            logger.warn("cannot open rtnetlink socket; network changes are noticed by probing only", ["error": String(cString: strerror(errno))])
            return
        }
        self.fd = fd
        let thread = Thread { [self] in self.run() }
        thread.name = "rtnetlink"
        thread.start()
    }

    @discardableResult
    package func addListener(_ listener: @escaping @Sendable () -> Void) -> Int {
        lock.lock(); defer { lock.unlock() }
        let id = nextID
        nextID += 1
        listeners[id] = listener
        return id
    }

    package func removeListener(_ id: Int) {
        lock.lock(); listeners[id] = nil; lock.unlock()
    }

    private func run() {
        var buffer = [UInt8](repeating: 0, count: 16384)
        while true {
            let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n < 0 {
                if errno == EINTR || errno == ENOBUFS { notify(); continue }
                return
            }
            notify()
        }
    }

    private func notify() {
        lock.lock()
        let all = Array(listeners.values)
        lock.unlock()
        for listener in all { listener() }
    }
}
