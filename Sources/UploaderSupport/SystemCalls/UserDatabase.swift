@preconcurrency import Glibc

/// The machine's user and group databases (passwd and group, NSS included): asked by the checks
/// of who may read a secret or use a spool, and by a command that takes on a spool owner's
/// identity. Kept at this edge so that those callers need no libc of their own.
package enum UserDatabase {
    /// A user's passwd entry with every group it is in (its primary group included).
    package struct User: Sendable, Equatable {
        package var name: String
        package var uid: UInt32
        package var gid: UInt32
        package var groups: [UInt32]
    }

    /// getpwnam(3), with the user's groups; nil when there is no such user.
    package static func user(named name: String) -> User? {
        guard !name.utf8.contains(0), let entry = getpwnam(name) else { return nil }
        return user(entry.pointee)
    }

    /// getpwuid(3), with the user's groups; nil when the number has no entry.
    package static func user(id uid: UInt32) -> User? {
        getpwuid(uid).map { user($0.pointee) }
    }

    private static func user(_ entry: passwd) -> User {
        var count: Int32 = 64
        var list = [gid_t](repeating: 0, count: Int(count))
        if getgrouplist(entry.pw_name, entry.pw_gid, &list, &count) == -1 {
            list = [gid_t](repeating: 0, count: Int(count))
            _ = getgrouplist(entry.pw_name, entry.pw_gid, &list, &count)
        }
        var groups = Array(list.prefix(Int(max(0, count))))
        if !groups.contains(entry.pw_gid) { groups.append(entry.pw_gid) }
        return User(name: String(cString: entry.pw_name), uid: entry.pw_uid, gid: entry.pw_gid, groups: groups)
    }

    /// The name of every user in the passwd database.
    package static func allUserNames() -> [String] {
        var names: [String] = []
        setpwent()
        while let entry = getpwent() { names.append(String(cString: entry.pointee.pw_name)) }
        endpwent()
        return names
    }

    /// The name of user `uid`, or nil when it has no entry.
    package static func userName(_ uid: UInt32) -> String? {
        getpwuid(uid).map { String(cString: $0.pointee.pw_name) }
    }

    /// The number of the group called `name` (getgrnam(3)), or nil when there is none.
    package static func groupID(named name: String) -> UInt32? {
        guard !name.utf8.contains(0) else { return nil }
        return getgrnam(name).map { $0.pointee.gr_gid }
    }

    /// The name of group `gid`, or nil when it has no entry.
    package static func groupName(_ gid: UInt32) -> String? {
        getgrgid(gid).map { String(cString: $0.pointee.gr_name) }
    }
}
