import Foundation
import UploaderValues

/// `keep_sent` and `keep_sent_bytes` as one value: what a pass over sent/ enforces.
package struct RetentionRule: Equatable, Sendable {
    /// Seconds a record may age in sent/ (its mtime: when the file was recorded as sent); 0: no bound.
    package var keep: Double
    /// Bytes sent/ may hold, files and records counted; 0: no bound.
    package var keepBytes: Int64

    package init(keep: Double, keepBytes: Int64) {
        self.keep = keep
        self.keepBytes = keepBytes
    }
}

/// What a pass over sent/ makes of one record it met (`SpoolMoves.judgeSent`).
package enum SentJudgement: Equatable, Sendable {
    /// The record went since the listing: nothing to judge.
    case gone
    /// The record is there, its file is not: a deletion cut after the file went, to finish
    /// whatever the bounds (a move into sent/ links the file before its record, so no other
    /// record there is without its file).
    case finishDeletion
    /// Older than `keep_sent`: to delete.
    case tooOld
    /// Within the age bound, weighed against `keep_sent_bytes`: its record's bytes and its file's,
    /// and its age (the record's mtime) for the oldest-first order.
    case weigh(bytes: Int64, mtimeNanos: Int64)
    /// Within every bound.
    case keep
}

extension SpoolMoves {
    /// Judges the delivered file at `file` in sent/ by its record's facts and its own. A look the
    /// disk refuses stops the judgement (`PlanStop`): the file is kept, and weighed by no bound,
    /// until it can be looked at.
    package static func judgeSent<D: DiskSteps>(_ file: RelativePath, rule: RetentionRule, now: Date,
                                                on disk: inout D) throws(PlanStop) -> SentJudgement {
        let place = SpoolPlace(.sent, file)
        guard let record = try disk.inspect(place.record) else { return .gone }
        guard let facts = try disk.inspect(place) else { return .finishDeletion }
        if rule.keep > 0, now.timeIntervalSince(Date(timeIntervalSince1970: Double(record.mtimeNanos) / 1e9)) > rule.keep { return .tooOld }
        guard rule.keepBytes > 0 else { return .keep }
        return .weigh(bytes: record.size + facts.size, mtimeNanos: record.mtimeNanos)
    }
}
