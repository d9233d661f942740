@preconcurrency import Glibc

/// A pipe(2): its two ends, each a `FileDescriptor` that closes once, both close-on-exec. What
/// wakes the service loop from its poll, and what a hook writes its output into: the callers
/// get the ends as owned values, not two numbers to close by hand.
///
/// `~Copyable` like its ends; `separated` takes them apart, to close one before the other.
package struct PipeEnds: ~Copyable, Sendable {
    /// The end that reads what the other wrote.
    package let readEnd: FileDescriptor
    /// The end that writes.
    package let writeEnd: FileDescriptor

    /// pipe(2), then FD_CLOEXEC on both ends (pipe2 is hidden behind _GNU_SOURCE), and O_NONBLOCK
    /// on both with `nonBlocking`: a read of an empty pipe, a write to a full one, fail with
    /// `.wouldBlock` rather than wait. What fails is thrown; the ends made so far are closed.
    package init(nonBlocking: Bool = false) throws(Errno) {
        var ends: [Int32] = [-1, -1]
        guard pipe(&ends) == 0 else { throw Errno.current }
        let read = FileDescriptor(adopting: ends[0])
        let write = FileDescriptor(adopting: ends[1])
        for end in ends {
            guard fcntl(end, F_SETFD, FD_CLOEXEC) == 0 else { throw Errno.current }
            guard nonBlocking else { continue }
            let flags = fcntl(end, F_GETFL)
            guard flags >= 0, fcntl(end, F_SETFL, flags | O_NONBLOCK) == 0 else { throw Errno.current }
        }
        readEnd = read
        writeEnd = write
    }

    /// Hands the two ends to `body` as values of their own, each closed when its owner is done
    /// with it (a module that uses this one cannot take a `~Copyable` value apart itself).
    package consuming func separated<Result, Failure: Error>(
        _ body: (consuming FileDescriptor, consuming FileDescriptor) throws(Failure) -> Result
    ) throws(Failure) -> Result {
        try body(readEnd, writeEnd)
    }
}
