@preconcurrency import Glibc

/// Who this process acts as on the file system (its effective user and group), read where a
/// decision depends on it — whether it may chown, whose file a producer's is.
package enum ProcessIdentity {
    /// geteuid(2).
    package static var effectiveUser: UInt32 { geteuid() }
    /// getegid(2).
    package static var effectiveGroup: UInt32 { getegid() }
    /// Root, who may chown and link any file (CAP_CHOWN, CAP_FOWNER).
    package static var isRoot: Bool { geteuid() == 0 }
    /// getpid(2).
    package static var processID: Int32 { getpid() }
}
