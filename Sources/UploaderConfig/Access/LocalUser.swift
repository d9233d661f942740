import UploaderSupport

/// A user of this machine with its groups, and what the permission bits along a path let it do:
/// the checks of who may read a secret and whether the service can use a spool ask this.
/// Mode bits only (no ACLs); root may do anything. The user database (passwd, groups) is read
/// through `UserDatabase`; what the file system says comes from `FileSystem`.
package struct LocalUser: Sendable, Equatable {
    package var name: String
    package var uid: UInt32
    package var gid: UInt32
    package var groups: [UInt32]

    package init?(named name: String) {
        guard let entry = UserDatabase.user(named: name) else { return nil }
        self.init(entry)
    }

    package init?(uid: UInt32) {
        guard let entry = UserDatabase.user(id: uid) else { return nil }
        self.init(entry)
    }

    private init(_ entry: UserDatabase.User) {
        (name, uid, gid, groups) = (entry.name, entry.uid, entry.gid, entry.groups)
    }

    /// Every user in the passwd database (NSS included).
    package static func all() -> [LocalUser] {
        UserDatabase.allUserNames().compactMap { LocalUser(named: $0) }
    }

    /// Whether the bits of `info` grant this user `want` (4 read, 2 write, 1 search).
    package func may(_ want: UInt32, _ info: FileSystem.Status) -> Bool {
        if uid == 0 { return true }
        let bits: UInt32
        if info.owner == uid { bits = (info.permissions >> 6) & 7 }
        else if groups.contains(info.group) { bits = (info.permissions >> 3) & 7 }
        else { bits = info.permissions & 7 }
        return bits & want == want
    }

    /// Whether this user reaches `path` (search on every directory above it) and may `want` on it.
    /// False when something on the way does not exist.
    package func may(_ want: UInt32, at path: String) -> Bool {
        firstRefusal(want, at: path) == nil && exists(path)
    }

    /// The first directory above `path` this user may not search (or `path` itself, if `want`
    /// is refused there); nil when nothing refuses. Missing components end the walk.
    package func firstRefusal(_ want: UInt32, at path: String) -> (path: String, info: FileSystem.Status)? {
        var prefix = ""
        let parts = path.split(separator: "/")
        for (index, part) in parts.enumerated() {
            let directory = prefix.isEmpty ? "/" : prefix
            guard let info = Self.status(directory) else { return nil }
            if !may(1, info) { return (directory, info) }
            prefix += "/" + part
            if index == parts.count - 1 {
                guard let info = Self.status(prefix) else { return nil }
                if !may(want, info) { return (prefix, info) }
            }
        }
        return nil
    }

    private func exists(_ path: String) -> Bool { Self.status(path) != nil }

    /// stat(2) of `path`, nil when it cannot be looked at: these are warnings about what a user
    /// may do, and a path that cannot be looked at ends the walk as a missing one does.
    static func status(_ path: String) -> FileSystem.Status? {
        try? FileSystem.statusFollowingLinks(path: path)
    }

    /// The number of the group called `name`, or nil when this machine has none.
    package static func groupID(named name: String) -> UInt32? { UserDatabase.groupID(named: name) }

    /// The name of group `gid`, or the number.
    package static func groupName(_ gid: UInt32) -> String { UserDatabase.groupName(gid) ?? String(gid) }

    /// The name of user `uid`, or the number.
    package static func userName(_ uid: UInt32) -> String { UserDatabase.userName(uid) ?? String(uid) }
}

extension LocalUser {
    /// The user the package makes and its unit runs as.
    package static let packagedServiceName = "uploader"

    /// Who "the service user" is when checking who may read a secret and use a spool: the caller
    /// when it is not root (the daemon itself, or `check-config` run as the service); run as root,
    /// the owner of the first spool root that exists and is not root's; else the user `uploader`
    /// if there is one. Nil when none of these (only root then counts as the service).
    package static func service(spoolRoots: [String]) -> LocalUser? {
        if !ProcessIdentity.isRoot { return LocalUser(uid: ProcessIdentity.effectiveUser) }
        for root in spoolRoots {
            if !root.utf8.contains(0), let info = status(root), info.owner != 0, let owner = LocalUser(uid: info.owner) {
                return owner
            }
        }
        return LocalUser(named: packagedServiceName)
    }
}
