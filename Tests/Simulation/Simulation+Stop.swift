import Foundation

extension Simulation {
    /// How long a body on the wire takes now (`SimWire`): nothing unless a stop is under way;
    /// then up to twice `shutdown_grace` and two seconds more, so some bodies outlast the grace.
    func wireTime() -> Double? {
        guard let stop = process.stopRequested else { return nil }
        return Double(choices.below(Int((2 * stop.grace + 2) * 1000) + 1)) / 1000
    }
}
