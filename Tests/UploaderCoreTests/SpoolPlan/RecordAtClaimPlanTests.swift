import Foundation
import Testing
import UploaderDecisions
import UploaderValues

/// The claim's first fork (`RecordAtClaim.judge`): every record state, beside the version it
/// was made of and beside another one (other size, other mtime).
@Suite struct RecordAtClaimPlanTests {
    static let mtime = Timestamp.format(Date(timeIntervalSince1970: 1_700_000_000))
    static let laterMtime = Timestamp.format(Date(timeIntervalSince1970: 1_700_000_060))

    static func record(_ state: Manifest.State) -> Manifest {
        Manifest(id: "id-a", profile: "p", path: RelativePath("a.bin"), size: 10, mtime: mtime, sha256: nil,
                 contentType: "application/octet-stream", state: state, createdAt: mtime)
    }

    /// (state, size, mtime of the file found) → what the claim does.
    static let table: [(Manifest.State, Int64, String, RecordAtClaim)] = [
        (.sent, 10, mtime, .finishMove(replacedFileFirst: false)),
        (.sent, 11, mtime, .changedDelivery),
        (.sent, 10, laterMtime, .changedDelivery),
        // The move of a file into retry/ or as failed is finished whatever is under the name now:
        // a file the producer put there meanwhile is told apart by its identity, in the plan.
        (.retry, 10, mtime, .finishMove(replacedFileFirst: true)),
        (.retry, 11, laterMtime, .finishMove(replacedFileFirst: true)),
        (.failed, 10, mtime, .finishMove(replacedFileFirst: true)),
        (.failed, 11, laterMtime, .finishMove(replacedFileFirst: true)),
        (.queued, 10, mtime, .reuseOrAfresh),
        (.queued, 11, laterMtime, .reuseOrAfresh),
        (.uploading, 10, mtime, .reuseOrAfresh),
        (.uploading, 11, laterMtime, .reuseOrAfresh),
    ]

    @Test func eachStateBesideEachVersionTakesItsBranch() {
        for (state, size, mtime, expected) in Self.table {
            #expect(RecordAtClaim.judge(Self.record(state), size: size, mtimeText: mtime) == expected,
                    "\(state) beside size \(size), mtime \(mtime)")
        }
    }

    @Test func theTableCoversEveryState() {
        #expect(Set(Self.table.map(\.0)) == Set(Manifest.State.allCases))
    }
}
