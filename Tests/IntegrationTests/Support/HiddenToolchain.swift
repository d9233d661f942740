import Foundation

/// Runs commands in a mount namespace of their own where the Swift toolchain this test
/// process was loaded from lies under an empty tmpfs: what a machine without Swift
/// looks like to the dynamic loader. Nothing outside the command's namespace changes.
struct HiddenToolchain {
    /// The toolchain's `libswiftCore.so`, as this process loaded it.
    let swiftCore: String
    /// What the tmpfs covers: the toolchain's `usr` directory (e.g. /opt/swift/usr), or
    /// only its `lib/swift` when the toolchain was installed into /usr itself.
    let hiddenDirectory: String

    init() throws {
        // Read to the end: /proc files report size 0, which String(contentsOfFile:) takes at its word.
        guard let handle = FileHandle(forReadingAtPath: "/proc/self/maps") else {
            throw HarnessError("cannot open /proc/self/maps")
        }
        defer { try? handle.close() }
        let maps = String(decoding: try handle.readToEnd() ?? Data(), as: UTF8.self)
        let loaded = maps.split(separator: "\n").compactMap { line -> String? in
            guard let slash = line.firstIndex(of: "/") else { return nil }
            let path = String(line[slash...])
            return path.hasSuffix("/libswiftCore.so") ? path : nil
        }
        guard let core = loaded.first else {
            throw HarnessError("this test process has no libswiftCore.so loaded, so the toolchain to hide is unknown")
        }
        swiftCore = core
        // <usr>/lib/swift/linux/libswiftCore.so
        var usr = URL(fileURLWithPath: core)
        for _ in 0..<4 { usr.deleteLastPathComponent() }
        hiddenDirectory = usr.path == "/usr" ? "/usr/lib/swift" : usr.path
    }

    /// Runs `command` with the toolchain hidden (`unshare --mount`, then a tmpfs over it).
    func run(_ command: [String], timeout: TimeInterval = 60) throws -> ProcessResult {
        guard let unshare = ProcessRunner.which("unshare") else {
            throw HarnessError("unshare (util-linux) is not installed: run scripts/install-deps.sh")
        }
        let script = "mount -t tmpfs -o size=1m,mode=0755 uploader-hidden-toolchain \"$0\" && exec \"$@\""
        return try ProcessRunner.run(
            [unshare, "--mount", "--propagation", "private", "sh", "-c", script, hiddenDirectory] + command,
            timeout: timeout)
    }
}
