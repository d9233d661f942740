import UploaderValues

extension ProfileState {
    /// Whether uploads (and the claims ahead of them) may start: online, the route leaves by an
    /// allowed interface (once a lookup said so), our credentials not rejected, inside an upload
    /// window. Paused is not a flag of its own: it is this, false.
    package func mayStart(_ policy: ProfilePolicy) -> Bool {
        !credentials.isRejected && mayTry(policy)
    }

    /// The same, leaving our credentials aside: while they are rejected, one trial file may start
    /// when this holds (`Transition.startTrial`).
    package func mayTry(_ policy: ProfilePolicy) -> Bool {
        guard reachability.isOnline, window?.open != false else { return false }
        if policy.interfaces.isEmpty { return true }
        if case .allowed = route { return true }
        return false
    }
}

/// `upload_window`: when uploads may start.
extension Transition {
    /// Looks at the windows again when the last look has run out (the owner wakes then: see
    /// `ProfileCore.nextDeadline`), or when the wall clock was set back before it. Closing lets go of claimed files, as a pause does; uploads in
    /// flight run to their end. `run --once` outside its windows starts nothing and ends (exit 0).
    mutating func refreshWindow() {
        guard !policy.windows.isAlways, state.phase == .running else { return }
        if let window = state.window, now.wall >= window.since, window.until.map({ now.wall < $0 }) ?? true { return }
        let was = state.window
        let phase = policy.windows.phase(at: now.wall, in: policy.timeZone)
        state.window = WindowPhase(open: phase.open, until: phase.until, since: now.wall)
        // Formatted only for a line that is logged: a formatter costs more than the rest of a step.
        var at: String { phase.until.map { LocalCalendar.format($0, in: policy.timeZone) } ?? "-" }
        if phase.open {
            if was?.open == false { log(.info, "upload window open; uploads start", ["window_closes_at": at]) }
            return
        }
        guard was?.open != false else { return }
        if policy.mode == .once {
            log(.info, "outside every upload window; nothing starts, files stay queued", ["next_window_opens_at": at])
            state.closed = true
            state.files.removeAllWaiting()
        } else {
            log(.info, "outside every upload window; uploads wait until it opens", ["next_window_opens_at": at])
        }
        releaseReady()
    }
}
