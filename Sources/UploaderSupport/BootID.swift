import Foundation

/// The kernel's id of the running boot (`/proc/sys/kernel/random/boot_id`): a record hashed in
/// another boot may name bytes a power cut has since undone (a producer's writes never fsynced),
/// so its claim hashes the file again.
package enum BootID {
    /// Where the kernel tells it.
    package static let path = "/proc/sys/kernel/random/boot_id"

    /// This boot's id; nil where the kernel does not say (the check is then skipped, with a warning at start).
    package static let current: String? = {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { return nil }
        let id = text.trimmingCharacters(in: .whitespacesAndNewlines)
        return id.isEmpty ? nil : id
    }()
}
