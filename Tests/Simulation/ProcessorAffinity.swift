import CSysShims

/// Keeps one schedule's threads on one processor.
///
/// A schedule runs its threads one at a time, handing a baton over semaphores at every seam
/// call. When the next holder sits on another processor, each handover wakes that processor and
/// moves the baton across; on one processor it is a plain switch, and a schedule runs about
/// twice as fast. A runner pins itself before its first schedule; the threads its schedules
/// start inherit the pin.
enum ProcessorAffinity {
    /// Pins the calling thread to the `index`-th processor it may run on (counting round); does
    /// nothing when the process may run on one processor only.
    static func pinCallingThread(toNth index: Int) {
        _ = uploader_pin_thread_to_nth_cpu(Int32(index))
    }
}
