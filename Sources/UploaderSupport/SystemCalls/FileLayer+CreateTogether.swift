import Foundation

/// A file to create whole and fsync (`FileLayer.createFiles`): its bytes, its name, its directory.
package struct NewFile: Sendable {
    package let data: [UInt8]
    package let name: RelativePath
    package let directory: String

    package init(_ data: [UInt8], named name: RelativePath, in directory: String) {
        self.data = data
        self.name = name
        self.directory = directory
    }
}

/// Several small files created and fsynced together ("write now, fsync later"): each is written,
/// then the writeback of all of them starts at once (`SystemCalls.startWriteback`), then each is
/// fsynced. On ext4 with delayed allocation a file's blocks are allocated when its writeback
/// starts: started together, the first fsync's journal commit carries every file's allocation and
/// the later fsyncs find theirs already committed, where one at a time each costs a commit.
extension FileLayer {
    /// What `createFile(sync: true)` does for each of `files`, together; each answers on its own,
    /// in order (one failing takes none of the others with it, and is removed again). A file is
    /// reported created only once its own fsync has returned.
    package func createFiles(_ files: [NewFile]) -> [Result<Void, any Error>] {
        var results = [Result<Void, any Error>](repeating: .success(()), count: files.count)
        var written: [(index: Int, fd: SystemDescriptor)] = []
        written.reserveCapacity(files.count)
        func drop(_ index: Int, _ fd: SystemDescriptor?, _ error: any Error) {
            if let fd { calls.close(fd) }
            let file = files[index]
            // One whose removal is refused too says so (`leftBehind`), for its caller to note.
            results[index] = .failure(SystemError.afterRemoving(file.name, failed: error, operation: "create",
                                                                path: file.name.displayed(in: file.directory)) {
                try unlink(file.name, in: file.directory)
            })
        }
        for (index, file) in files.enumerated() {
            let display = file.name.displayed(in: file.directory)
            let fd: SystemDescriptor
            do {
                fd = try file.name.withCString(in: file.directory) { cpath in
                    try call("create", display) { () throws(Errno) in
                        try calls.open(cpath, at: .workingDirectory, [.writeOnly, .create, .exclusive], mode: 0o640)
                    }
                }
            } catch {
                results[index] = .failure(error)
                continue
            }
            do {
                try file.data.withUnsafeBytes { try writeAll($0, to: fd, path: display) }
                written.append((index, fd))
            } catch {
                drop(index, fd, error)
            }
        }
        if written.count > 1 {
            for (_, fd) in written {
                do { try calls.startWriteback(fd) } catch {
                    // A hint only: the fsync that follows does the work, and says what fails.
                }
            }
        }
        for (index, fd) in written {
            do {
                // The planted bug: the file's fsync skipped, its rename into place made all the same.
                if !PlantedBug.fileSyncSkipped.isActive {
                    try sync(fd, display: files[index].name.displayed(in: files[index].directory))
                }
                calls.close(fd)
            } catch {
                drop(index, fd, error)
            }
        }
        return results
    }
}
