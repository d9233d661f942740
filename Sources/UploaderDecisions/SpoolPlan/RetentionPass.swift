import UploaderValues

/// Which files one pass over sent/ deletes, decided as the walk meets each record
/// (`SpoolMoves.judgeSent`) and once it has met them all: a file too old for `keep_sent`, or a
/// deletion a cut left half done, goes as it is met; the rest are weighed, and when they hold
/// more than `keep_sent_bytes`, the oldest go first until sent/ fits. Only the `window` oldest
/// are remembered, so memory stays flat on a sent/ of millions; when more must go than the window
/// held, the pass asks for another walk (`walkAgain`).
package struct RetentionPass: Sendable {
    package let keepBytes: Int64
    private var oldest: OldestSentFiles
    /// Bytes weighed so far (files and their records), less what the pass deleted of them.
    package private(set) var weighed: Int64 = 0

    package init(keepBytes: Int64, window: Int) {
        self.keepBytes = keepBytes
        oldest = OldestSentFiles(capacity: window)
    }

    /// The walk met the record at `manifest`, judged `judgement`: true when its file is to be
    /// deleted now.
    package mutating func met(_ manifest: RelativePath, _ judgement: SentJudgement) -> Bool {
        switch judgement {
        case .gone, .keep:
            return false
        case .finishDeletion, .tooOld:
            return true
        case .weigh(let bytes, let mtimeNanos):
            weighed += bytes
            oldest.offer(OldestSentFiles.Candidate(mtimeNanos: mtimeNanos, manifest: manifest, bytes: bytes))
            return false
        }
    }

    /// Whether sent/ still holds more than `keep_sent_bytes` of what was weighed.
    package var beyondBound: Bool { keepBytes > 0 && weighed > keepBytes }

    /// After the walk: the files to delete for the size bound, oldest first; each is deleted in
    /// turn while `beyondBound` holds (`deleted` after each that went). Empty within the bound.
    package func oldestFirst() -> [OldestSentFiles.Candidate] { beyondBound ? oldest.oldestFirst() : [] }

    /// `candidate` was deleted: its bytes no longer count.
    package mutating func deleted(_ candidate: OldestSentFiles.Candidate) {
        assert(candidate.bytes <= weighed, "a deletion takes away only bytes the pass weighed")
        weighed -= candidate.bytes
    }

    /// Once the deletions are done: sent/ is still beyond the bound, and files the window left out
    /// remain to delete, so another walk is needed.
    package var walkAgain: Bool { beyondBound && oldest.overflowed }
}
