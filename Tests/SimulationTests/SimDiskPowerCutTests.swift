import Foundation
import Testing
@testable import UploaderSimulation
import UploaderSupport
import UploaderCore
import UploaderConfig
import UploaderSpool

/// A power cut leaves exactly the states each model allows, and over many seeds every one of
/// them: a prefix of the journal (journalled), each directory entry on its own (noJournal),
/// old or new data for what was not fsynced.
@Suite struct SimDiskPowerCutTests {
    private func bytes(_ text: String) -> [UInt8] { SimDiskTesting.bytes(text) }

    /// /d/a and /d/b, durable.
    private func twoDurableFiles(_ disk: SimDisk) throws {
        try SimDiskTesting.durable(disk, directories: ["/d"], files: ["/d/a": "A", "/d/b": "B"])
    }

    @Test func journalledARenamePairWithoutFsyncSurvivesAsAPrefixNeverTheSecondWithoutTheFirst() throws {
        let outcomes = try SimDiskTesting.powerCutOutcomes(.journalled, setUp: { disk in
            try twoDurableFiles(disk)
            try disk.rename("/d/a", "/d/x")
            try disk.rename("/d/b", "/d/y")
        }, outcome: { $0.names(in: "/d") })
        #expect(outcomes == [["a", "b"], ["b", "x"], ["x", "y"]])
    }

    /// Any fsync commits the journal: every operation before it. Not the data written to
    /// another file since its blocks were allocated (ext4's delayed allocation): that file keeps
    /// its old bytes or gets the new ones, as if the commit had not happened.
    @Test func journalledAnyFsyncCommitsEveryOperationButNotDataAwaitingAllocation() throws {
        let outcomes = try SimDiskTesting.powerCutOutcomes(.journalled, setUp: { disk in
            try twoDurableFiles(disk)
            try disk.rename("/d/a", "/d/x")
            disk.writeInPlace("/d/b", data: bytes("B2"))
            try disk.makeDirectories("/other")
            disk.createFile("/other/f", data: bytes("f"), sync: true)  // an fsync of an unrelated file
            try disk.rename("/d/b", "/d/y")                            // after the commit: may be lost
        }, outcome: { SimDiskTesting.files(on: $0, below: "/") })
        #expect(outcomes == [["/d/x": bytes("A"), "/d/b": bytes("B2"), "/other/f": bytes("f")],
                             ["/d/x": bytes("A"), "/d/y": bytes("B2"), "/other/f": bytes("f")],
                             ["/d/x": bytes("A"), "/d/b": bytes("B"), "/other/f": bytes("f")],
                             ["/d/x": bytes("A"), "/d/y": bytes("B"), "/other/f": bytes("f")]])
    }

    /// A new file renamed over an old one, never fsynced: the rename allocates its data
    /// (`auto_da_alloc`), so a later commit carries both, and the name never holds an empty file.
    @Test func journalledARenameOverAFileCarriesTheNewFilesDataWithTheNextCommit() throws {
        let outcomes = try SimDiskTesting.powerCutOutcomes(.journalled, setUp: { disk in
            try twoDurableFiles(disk)
            disk.createFile("/d/tmp", data: bytes("A2"), sync: false)
            try disk.rename("/d/tmp", "/d/a")
            disk.createFile("/d/c", data: bytes("C"), sync: false)
            try disk.makeDirectories("/other")
            disk.createFile("/other/f", data: bytes("f"), sync: true)  // the commit
        }, outcome: { SimDiskTesting.files(on: $0, below: "/") })
        // /d/c's name is committed, its data is not: it may be empty.
        #expect(outcomes == [["/d/a": bytes("A2"), "/d/b": bytes("B"), "/d/c": bytes("C"), "/other/f": bytes("f")],
                             ["/d/a": bytes("A2"), "/d/b": bytes("B"), "/d/c": [], "/other/f": bytes("f")]])
    }

    @Test(arguments: [(SimDisk.Model.journalled, [["/d/new": "new"]]), (.noJournal, [[:], ["/d/new": "new"]])])
    func aFsyncOfANewFileCommitsItsNameOnlyInTheJournalledModel(_ model: SimDisk.Model, _ expected: [[String: String]]) throws {
        let outcomes = try SimDiskTesting.powerCutOutcomes(model, setUp: { disk in
            try SimDiskTesting.durable(disk, directories: ["/d"])
            disk.createFile("/d/new", data: bytes("new"), sync: true)
        }, outcome: { SimDiskTesting.files(on: $0, below: "/").mapValues { String(decoding: $0, as: UTF8.self) } })
        #expect(outcomes == Set(expected))
    }

    /// ext4 without a journal, unlike ext2: a file's fsync also makes durable the directory
    /// holding its new name, and that directory's own new name, up to a durable one.
    @Test func ext4WithoutAJournalAFsyncOfANewFilePersistsItsNameAndItsNewDirectorysName() throws {
        let outcomes = try SimDiskTesting.powerCutOutcomes(.noJournal, setUp: { disk in
            disk.fileSyncPersistsNewEntry = true
            try SimDiskTesting.durable(disk, directories: ["/d"])
            try disk.makeDirectories("/d/sub")
            disk.createFile("/d/sub/f", data: bytes("f"), sync: true)
        }, outcome: { SimDiskTesting.files(on: $0, below: "/") })
        #expect(outcomes == [["/d/sub/f": bytes("f")]])
    }

    /// The whole directory goes with it: a removal made there before is durable too, where
    /// ext2 may keep or lose each change on its own.
    @Test(arguments: [(true, [["/d/new"]]), (false, [["/d/a"], ["/d/new"], ["/d/a", "/d/new"], []])])
    func aFsyncOfANewFileCarriesTheRemovalsInItsDirectoryOnlyInExt4WithoutAJournal(_ ext4: Bool, _ expected: [[String]]) throws {
        let outcomes = try SimDiskTesting.powerCutOutcomes(.noJournal, setUp: { disk in
            disk.fileSyncPersistsNewEntry = ext4
            try SimDiskTesting.durable(disk, directories: ["/d"], files: ["/d/a": "A"])
            try disk.remove("/d/a")
            disk.createFile("/d/new", data: bytes("new"), sync: true)
        }, outcome: { SimDiskTesting.files(on: $0, below: "/").keys.sorted() })
        #expect(outcomes == Set(expected))
    }

    /// /A/f durable, /B empty and durable.
    private func fileInA(_ disk: SimDisk) throws {
        try SimDiskTesting.durable(disk, directories: ["/A", "/B"], files: ["/A/f": "f"])
    }

    @Test func noJournalARenameAcrossDirectoriesCanEndInTheSourceTheTargetBothOrNeither() throws {
        let outcomes = try SimDiskTesting.powerCutOutcomes(.noJournal, setUp: { disk in
            try fileInA(disk)
            try disk.rename("/A/f", "/B/f")
        }, outcome: { SimDiskTesting.files(on: $0, below: "/").keys.sorted() })
        #expect(outcomes == [["/A/f"], ["/B/f"], ["/A/f", "/B/f"], []])
    }

    @Test func noJournalAFsyncOfTheTargetThenOfTheSourceLeavesTheFileInTheTargetOnly() throws {
        let outcomes = try SimDiskTesting.powerCutOutcomes(.noJournal, setUp: { disk in
            try fileInA(disk)
            try disk.rename("/A/f", "/B/f")
            disk.syncParent("/B/f")
            disk.syncParent("/A/f")
        }, outcome: { SimDiskTesting.files(on: $0, below: "/") })
        #expect(outcomes == [["/B/f": bytes("f")]])
    }

    @Test func noJournalAFsyncOfADirectoryLeavesItsNewSubdirectoryUnreachable() throws {
        let outcomes = try SimDiskTesting.powerCutOutcomes(.noJournal, setUp: { disk in
            try SimDiskTesting.durable(disk, directories: ["/d"])
            try disk.makeDirectories("/d/sub")
            disk.createFile("/d/sub/f", data: bytes("f"), sync: true)
            disk.syncParent("/d/sub/f")  // sub's own entries are durable; its name in /d is not
        }, outcome: { SimDiskTesting.files(on: $0, below: "/").keys.sorted() })
        #expect(outcomes == [[], ["/d/sub/f"]])
    }

    @Test func unsyncedDataCanComeBackAsTheOldContentNeverAMix() throws {
        for model in SimDisk.Model.allCases {
            let outcomes = try SimDiskTesting.powerCutOutcomes(model, setUp: { disk in
                try twoDurableFiles(disk)
                disk.writeInPlace("/d/a", data: bytes("A, rewritten"))
                disk.append("/d/b", data: bytes("+"))
            }, outcome: { [$0.contents("/d/a"), $0.contents("/d/b")] })
            #expect(outcomes == [[bytes("A"), bytes("B")], [bytes("A, rewritten"), bytes("B")],
                                 [bytes("A"), bytes("B+")], [bytes("A, rewritten"), bytes("B+")]], "\(model)")
        }
    }

    @Test func aNewFileWrittenWithoutFsyncCanSurviveEmpty() throws {
        for model in SimDisk.Model.allCases {
            let outcomes = try SimDiskTesting.powerCutOutcomes(model, setUp: { disk in
                try SimDiskTesting.durable(disk, directories: ["/d"])
                disk.createFile("/d/new", data: bytes("data"), sync: false)
            }, outcome: { $0.contents("/d/new") })
            #expect(outcomes == [nil, [], bytes("data")], "\(model)")
        }
    }

    @Test func theSpoolsManifestRewriteNeverLeavesTheNameMissing() throws {
        for model in SimDisk.Model.allCases {
            let outcomes = try SimDiskTesting.powerCutOutcomes(model, setUp: { disk in
                let spool = Spool(paths: SpoolPaths(root: "/spool"), fs: disk, temporaries: TemporaryNames(start: 0))
                try spool.prepare()
                var manifest = Manifest(id: "id", profile: "p", path: RelativePath("a"), size: 0, mtime: "", sha256: nil,
                                        contentType: "", state: .queued, createdAt: "")
                try spool.writeManifest(manifest, for: RelativePath("a"), in: .outbox)
                try disk.syncAll()
                manifest.state = .uploading
                try spool.writeManifest(manifest, for: RelativePath("a"), in: .outbox)  // renamed over, no directory fsync
            }, outcome: { disk in
                disk.contents("/spool/outbox/a.manifest.json").map { (try? Manifest.decode(Data($0)))?.state }
            })
            #expect(outcomes == [.queued, .uploading], "\(model)")
        }
    }

    @Test func theSameSeedGivesTheSameOutcome() throws {
        func run(_ seed: UInt64) throws -> [String: [UInt8]] {
            let disk = SimDiskTesting.disk(.noJournal)
            try twoDurableFiles(disk)
            for i in 0..<20 { disk.createFile("/d/f\(i)", data: bytes("\(i)"), sync: i % 2 == 0) }
            var rng = SplitMix64(seed: seed)
            disk.powerCut(&rng)
            return SimDiskTesting.files(on: disk, below: "/")
        }
        for seed in 0..<UInt64(10) { #expect(try run(seed) == run(seed)) }
    }

    @Test func afterAPowerCutWhatSurvivedIsDurableAndDescriptorsAreClosed() throws {
        for model in SimDisk.Model.allCases {
            let disk = SimDiskTesting.disk(model)
            try twoDurableFiles(disk)
            try disk.rename("/d/a", "/d/x")
            let fd = try disk.openForReading(RelativePath("b"), in: "/d")
            var rng = SplitMix64(seed: 1)
            disk.powerCut(&rng)
            let survived = SimDiskTesting.files(on: disk, below: "/")
            #expect(throws: SystemError.self) { try disk.status(fd: fd, path: "b") }
            for seed in 0..<UInt64(20) {
                var again = SplitMix64(seed: seed)
                disk.powerCut(&again)
                #expect(SimDiskTesting.files(on: disk, below: "/") == survived, "\(model)")
            }
        }
    }
}
