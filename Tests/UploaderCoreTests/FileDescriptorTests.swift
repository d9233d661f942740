import Foundation
import Testing
@testable import UploaderSupport

/// The system-call layer's two types: an errno by name with the C library's words, and a
/// descriptor that lets go of its file (and the lock on it) exactly when its owner is done.
@Suite struct FileDescriptorTests {
    @Test func aFailedOpenSaysTheCallThePathAndTheErrnoByName() throws {
        let dir = try TemporaryDirectory()
        let missing = dir.path + "/missing"
        #expect {
            _ = try FileDescriptor.open(missing, .readOnly)
        } throws: { error in
            guard let error = error as? SystemError else { return false }
            return error.code == .noEntry && error.isNotFound
                && error.description == "open \(missing): No such file or directory (errno 2)"
        }
        #expect(Errno.wouldBlock == Errno(rawValue: EAGAIN), "EAGAIN and EWOULDBLOCK are one value on Linux")
        #expect(Errno.permissionDenied.description == "Permission denied")
    }

    @Test func aDescriptorClosesWhenItsScopeEndsOrWhenClosedAndItsLockGoesWithIt() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path + "/lock"
        do {
            let holder = try FileDescriptor.open(path, .readWrite, create: 0o600)
            #expect(try holder.tryLock(exclusive: true, path: path))
            let other = try FileDescriptor.open(path, .readOnly)
            #expect(try other.tryLock(exclusive: false, path: path) == false, "held while its owner lives")
        }
        let after = try FileDescriptor.open(path, .readOnly)
        #expect(try after.tryLock(exclusive: false, path: path), "the end of the scope closed it, and let the lock go")
        after.unlock()

        let holder = try FileDescriptor.open(path, .readWrite)
        #expect(try holder.tryLock(exclusive: true, path: path))
        holder.close()
        let next = try FileDescriptor.open(path, .readWrite)
        #expect(try next.tryLock(exclusive: true, path: path), "close() let it go at once")
    }

    @Test func aSmallFileIsRewrittenInPlaceAndReadBack() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path + "/pid"
        let fd = try FileDescriptor.open(path, .readWrite, create: 0o600)
        try fd.replaceContent(with: Array("123456\n".utf8), path: path)
        try fd.replaceContent(with: Array("42\n".utf8), path: path)
        #expect(try fd.read(upTo: 32, at: 0, path: path) == Array("42\n".utf8), "the longer old content is gone")
    }
}
