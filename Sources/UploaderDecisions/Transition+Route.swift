import UploaderValues

/// `interfaces`: the kernel's route to the destination must leave by an allowed interface.
/// A route elsewhere pauses the profile as an outage does (uploads in flight aborted, no
/// attempt spent, one log line naming the interface); every network change looks again.
extension Transition {
    /// Asks for a route lookup, or for one more after the one running.
    mutating func checkRoute() {
        guard state.phase == .running else { return }
        if state.routeChecking {
            state.routeCheckAgain = true
        } else {
            state.routeChecking = true
            state.routeCheckAgain = false
            effects.append(.checkRoute)
        }
    }

    mutating func routeChecked(_ report: RouteReport) {
        state.routeChecking = false
        guard state.phase == .running else { return }
        switch report {
        case .via(let name) where !policy.interfaces.contains(name):
            routeElsewhere(name)
        case .via(let name):
            routeAllowed(name)
        case .unknown(let problem):
            // No route, or no address: not the interface's doing. Uploads try, and go offline if they must.
            log(.debug, "cannot look up the route to the destination", ["error": problem])
            routeAllowed(nil)
        }
        if state.routeCheckAgain { checkRoute() }
    }

    private mutating func routeElsewhere(_ name: String) {
        let was = state.route
        state.route = .elsewhere(name)
        guard was != .elsewhere(name) else { return }
        let reason = "route to the destination leaves by \(name), not one of interfaces"
        if policy.mode == .once {
            close(leavingQueued: "\(reason); leaving files queued", reason)
            return
        }
        log(.warn, "route to the destination leaves by an interface not allowed; profile paused, files stay queued",
            ["interface": name, "allowed": policy.interfaces.sorted().joined(separator: " ")])
        if case .elsewhere = was { return }
        if !state.files.slots.isEmpty { effects.append(.cancelUploads(state.files.slots.sorted())) }
        releaseReady()
    }

    private mutating func routeAllowed(_ name: String?) {
        let was = state.route
        state.route = .allowed(name)
        if case .elsewhere(let old) = was {
            log(.info, "route to the destination leaves by an allowed interface again; resuming",
                ["interface": name ?? "unknown", "was": old])
        }
    }
}
