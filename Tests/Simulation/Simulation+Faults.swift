/// The faults of DESIGN §13 a schedule draws once, before it starts: which the disk makes.
extension Simulation {
    /// In about a quarter of the schedules the disk fails now and then until the faults stop:
    /// ENOSPC or EIO on a create, link, mkdir or write, short writes, EIO on fsync.
    func drawDiskFaults() {
        guard choices.chance(25) else { return }
        let percent = 1 + choices.below(5)
        note("disk faults: about \(percent) % of the process's writes, creates and fsyncs fail")
        disk.injectFaults { [choices] site in
            guard choices.chance(percent) else { return .none }
            switch site {
            case .write: return [.noSpace, .ioError, .shortWrite, .shortWrite][choices.below(4)]
            case .fsync: return .ioError
            case .allocate: return choices.chance(70) ? .noSpace : .ioError
            }
        }
    }
}
