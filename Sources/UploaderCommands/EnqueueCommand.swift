import Foundation
import UploaderSupport
import UploaderConfig
import UploaderSpool
import UploaderTransfer
import UploaderWatch
import UploaderCore
import UploaderDaemon

/// `uploader enqueue`: puts files into an outbox so the daemon never sees half of one —
/// copy to a hidden temporary name, fsync, rename (or a plain rename with `--move`).
enum EnqueueCommand {
    static func run(_ config: Configuration, profile name: String, move: Bool, files: [String]) -> Int32 {
        guard let profile = config.profiles.first(where: { $0.name == name }) else {
            Daemon.printError("no profile named \"\(name)\" in \(config.path)")
            return Daemon.ExitCode.usage
        }
        let spool = Spool(paths: profile.spool)
        do { try spool.prepare() } catch {
            Daemon.printError("profile \(name): cannot prepare spool: \(error)")
            return 1
        }
        var failures = 0
        for file in files {
            let base = RelativePath((file as NSString).lastPathComponent)
            do {
                let target = try FileLifecycle(spool: spool, logger: Logger(level: .error)).freeName(for: base, in: .outbox)
                // A move that cannot be a rename (another file system, a directory we may not
                // write) is a copy: the copy then reports whatever stops it too.
                if move, (try? moveFile(file, to: target, in: spool.paths.outbox)) != nil {
                    print("\(file) → \(target.displayed(in: spool.paths.outbox))")
                    continue
                }
                try copyFile(file, to: target, in: spool.paths.outbox)
                print("\(file) → \(target.displayed(in: spool.paths.outbox))")
                if move {
                    do {
                        try FileSystem.unlink(path: file)
                    } catch {
                        Daemon.printError("\(file): enqueued as a copy; the original stays: \(error)")
                    }
                }
            } catch {
                Daemon.printError("\(file): not enqueued: \(error)")
                failures += 1
            }
        }
        return failures == 0 ? 0 : 1
    }

    private static func moveFile(_ source: String, to target: RelativePath, in outbox: String) throws {
        let st = try FileSystem.status(path: source)
        guard st.kind == .regular else { throw SystemError("enqueue", path: source, code: .invalid) }
        let directory = (source as NSString).deletingLastPathComponent
        try FileSystem.rename(RelativePath((source as NSString).lastPathComponent), in: directory.isEmpty ? "." : directory,
                              to: target, in: outbox, replace: false)
        try FileSystem.syncDirectoryAt(outbox)
    }

    /// A producer's copy is group-writable (the outbox's group, by its setgid bit), so the service
    /// may link it as it is; the spool owner's own copy is 0640 as any file the daemon writes.
    private static func copyMode(in outbox: String) -> UInt32 {
        // An outbox that cannot be looked at gets the owner's mode; the copy's own write says what is wrong.
        guard let status = try? FileSystem.statusFollowingLinks(path: outbox) else { return 0o640 }
        return status.owner != ProcessIdentity.effectiveUser ? 0o660 : 0o640
    }

    private static func copyFile(_ source: String, to target: RelativePath, in outbox: String) throws {
        let input = try FileDescriptor.open(source, .readOnly)
        let st = try FileSystem.status(fd: input.rawValue, path: source)
        guard st.kind == .regular else { throw SystemError("enqueue (not a regular file)", path: source, code: .invalid) }
        // Its own temporary prefix: a running daemon's rescan deletes `.upl-tmp-` leftovers in the outbox.
        try FileSystem.writeAtomically(to: target, in: outbox, syncDirectory: true, replace: false, mode: copyMode(in: outbox),
                                       temporaryPrefix: ".upl-enqueue-") { output, display in
            var buffer = [UInt8](repeating: 0, count: 1 << 20)
            while true {
                let n = try buffer.withUnsafeMutableBytes { raw in try input.read(into: raw, path: source) }
                if n == 0 { break }
                try buffer.withUnsafeBytes { try FileSystem.writeAll(UnsafeRawBufferPointer(rebasing: $0[0..<n]), to: output, path: display) }
            }
        }
    }
}
