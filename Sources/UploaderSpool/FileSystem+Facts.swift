import UploaderSupport
import UploaderDecisions

extension FileSystem.Status {
    /// What the spool's planner decides by: identity, size, mtime, and whether it is a regular file.
    var facts: FileFacts {
        FileFacts(identity: FileIdentity(device: device, inode: inode), size: size, mtime: mtimeText, mtimeNanos: mtimeNanos,
                  isRegular: kind == .regular)
    }
}
