import Foundation
import Synchronization
import UploaderSupport

/// Production's threads, run one at a time: a deterministic `Scheduler` for the simulator.
///
/// Every thread the process starts through it (the worker pool's) is a real thread, but only
/// the one holding the baton runs; the others wait at a gate of their own. The holder gives the
/// baton away at each seam call (`yield`: a disk call, a step of a request) and whenever it
/// waits on a `WakeUp` (a worker with no job, a caller behind a batch or a directory fsync);
/// the next holder is drawn from the schedule's `ChoiceSource` among the threads that can run.
/// So several jobs are in flight at once, interleaved at every seam call in an order the seed
/// decides, through production's job board, batching and fsync grouping, and a seed replays
/// exactly. A wait gives the baton back, so the simulation never blocks on its own: if no
/// thread can run, time is what moves next. A wait with a deadline on the system's clock times
/// out; threads asleep on the simulated clock (a transfer in the rate limiter while the world
/// waits for the workers to end) are woken by `timeMoves`, which moves that clock on. With
/// neither, it is a deadlock, reported with the threads that wait.
///
/// The simulator's own thread (the world: producers, the network, the clock, the owner's
/// steps) holds the baton first and is one of the threads; a worker hands it back at a seam
/// call now and then (`worldShare`), as often as the world moved under a job before.
final class BatonScheduler: Scheduler, @unchecked Sendable {
    // The table is read and changed only by the baton's holder, under its lock; `choices` is used
    // by the holder only.
    private struct Table {
        /// Each thread's gate, by id; the world's (0) too.
        var gates: [Int: DispatchSemaphore] = [world: DispatchSemaphore(value: 0)]
        /// Threads that can run (the holder included, unless it waits), in order of id.
        var runnable: [Int] = [world]
        var holder = world
        var nextID = 1
        var names: [Int: String] = [world: "world"]
        var pthreads: [Int: pthread_t] = [world: pthread_self()]
    }

    static let world = 0
    /// Percent of a worker's seam calls at which the world takes the baton back.
    static let worldShare = 15
    private let table = Mutex(Table())
    private let choices: ChoiceSource
    /// Called, by the holder, when every thread waits: moves the simulated clock on if a thread
    /// sleeps on it (which makes that thread runnable) and says whether it did.
    var timeMoves: () -> Bool = { false }

    init(choices: ChoiceSource) { self.choices = choices }

    func makeWakeUp() -> any WakeUp { BatonWakeUp(scheduler: self) }

    func startThread(named name: String, _ body: @escaping @Sendable () -> Void) {
        let (id, gate) = table.withLock { table in
            let id = table.nextID
            table.nextID += 1
            let gate = DispatchSemaphore(value: 0)
            table.gates[id] = gate
            table.names[id] = name
            table.runnable.append(id)
            return (id, gate)
        }
        let plant = PlantedBug.active
        let thread = Thread { [self] in
            PlantedBug.switchOn(plant)
            gate.wait()
            table.withLock { $0.pthreads[id] = pthread_self() }
            body()
            finish(id)
        }
        thread.name = name
        thread.stackSize = 1 << 20
        thread.start()
    }

    /// The world holds the baton (not a worker).
    var worldHolds: Bool { table.withLock { $0.holder == Self.world } }

    /// Threads other than the world that can run now.
    var workersRunnable: Int { table.withLock { $0.runnable.count { $0 != Self.world } } }

    /// A seam call of the holder: the baton may go to another thread that can run.
    func yield() { pass(blocked: false, worldShare: Self.worldShare) }

    /// The world lets the workers run: the baton goes to one of them, and comes back at one of
    /// their seam calls (or once none can run).
    func letWorkersRun() { pass(blocked: false, worldShare: 0) }

    /// The holder waits on `wake`: gives the baton away until the wake-up is signalled (or, with
    /// a deadline, until no thread is left to run); true when signalled.
    fileprivate func block(on wake: BatonWakeUp, timed: Bool) -> Bool {
        pass(blocked: true, timed: timed, waitingOn: wake, worldShare: Self.worldShare)
    }

    /// `wake`'s waiter can run again.
    fileprivate func ready(_ id: Int) {
        table.withLock { table in
            guard !table.runnable.contains(id) else { return }
            table.runnable.insert(id, at: table.runnable.firstIndex { $0 > id } ?? table.runnable.endIndex)
        }
    }

    /// Hands the baton to a thread drawn among those that can run (the holder among them unless
    /// `blocked`) and returns once the holder has it back. False when the holder waits (`timed`)
    /// and no thread is left to run: its deadline is what comes next.
    @discardableResult
    private func pass(blocked: Bool, timed: Bool = false, waitingOn wake: BatonWakeUp? = nil, worldShare: Int) -> Bool {
        let (me, signalled) = table.withLock { table -> (Int, Bool) in
            let me = table.holder
            precondition(pthread_equal(pthread_self(), table.pthreads[me]!) != 0, "a thread ran simulated code without the baton (it is \(table.names[me]!)'s)")
            guard blocked else { return (me, false) }
            if let wake, wake.consumeSignal(waiter: me) { return (me, true) }
            table.runnable.removeAll { $0 == me }
            return (me, false)
        }
        if signalled { return true }
        while true {
            let (next, gates) = table.withLock { table -> (Int??, (mine: DispatchSemaphore, next: DispatchSemaphore?)) in
                guard let next = choose(table.runnable, me: me, worldShare: worldShare) else {
                    guard timed else { return (.some(nil), (table.gates[me]!, nil)) }
                    wake?.giveUp()
                    table.runnable.insert(me, at: table.runnable.firstIndex { $0 > me } ?? table.runnable.endIndex)
                    return (nil, (table.gates[me]!, nil))
                }
                table.holder = next
                return (next, (table.gates[me]!, table.gates[next]!))
            }
            guard let next else { return false }
            guard let next else {
                moveTimeOrDeadlock()
                continue
            }
            guard next != me, let nextGate = gates.next else { return true }
            nextGate.signal()
            gates.mine.wait()
            return true
        }
    }

    /// The thread `id` has ended: the baton goes on.
    private func finish(_ id: Int) {
        table.withLock { table in
            table.runnable.removeAll { $0 == id }
            table.gates[id] = nil
            table.names[id] = nil
        }
        while true {
            let gate: DispatchSemaphore? = table.withLock { table in
                guard let next = choose(table.runnable, me: id, worldShare: Self.worldShare) else { return nil }
                table.holder = next
                return table.gates[next]!
            }
            guard let gate else {
                moveTimeOrDeadlock()
                continue
            }
            gate.signal()
            return
        }
    }

    /// Every thread waits: time moves for those asleep on the simulated clock, else it is a deadlock.
    private func moveTimeOrDeadlock() {
        if timeMoves() { return }
        table.withLock { deadlock($0) }
    }

    /// The next holder, drawn: the world, when it can run, with `worldShare` percent if another
    /// thread passes (and keeps it with the rest if it passes itself), else one of the other
    /// threads that can run; nil when none can.
    private func choose(_ runnable: [Int], me: Int, worldShare: Int) -> Int? {
        let workers = runnable.filter { $0 != Self.world }
        let worldReady = runnable.first == Self.world
        if workers.isEmpty { return worldReady ? Self.world : nil }
        let worker = { workers.count == 1 ? workers[0] : workers[self.choices.below(workers.count)] }
        guard worldReady, worldShare > 0 else { return worker() }
        if me == Self.world { return choices.chance(100 - worldShare) ? Self.world : worker() }
        return choices.chance(worldShare) ? Self.world : worker()
    }

    private func deadlock(_ table: borrowing Table) -> Never {
        let names = table.names.sorted { $0.key < $1.key }.map(\.value)
        fatalError("simulated threads deadlocked: every thread waits (\(names.joined(separator: ", ")))")
    }
}

/// A wake-up under the baton: waiting gives the baton away; a signal makes the waiter runnable
/// again (it runs when drawn). Signals are counted, as `WakeUp` says.
private final class BatonWakeUp: WakeUp, @unchecked Sendable {
    // Changed by the baton's holder only.
    private var signals = 0
    private var waiter: Int?
    private let scheduler: BatonScheduler

    init(scheduler: BatonScheduler) { self.scheduler = scheduler }

    func wait() { _ = scheduler.block(on: self, timed: false) }

    /// The deadline is on the system's clock, which the simulation does not read: it passes when
    /// nothing else can run.
    func wait(until deadline: DispatchTime) -> Bool { scheduler.block(on: self, timed: true) }

    func signal() {
        guard let waiter else { return signals += 1 }
        self.waiter = nil
        scheduler.ready(waiter)
    }

    /// Takes a signal that came first (true), or records `waiter` as waiting for the next.
    func consumeSignal(waiter: Int) -> Bool {
        if signals > 0 {
            signals -= 1
            return true
        }
        self.waiter = waiter
        return false
    }

    /// The waiter stopped waiting without a signal.
    func giveUp() { waiter = nil }
}
