import Foundation
import UploaderSimulation

// `simulate --seeds N --from S [--disk journalled|noJournal|both] [--threads T] [--plant NAME]`
// `simulate --replay SEED [--disk MODEL] [--plant NAME]`
// `--destination http|s3|tus|sftp` runs every schedule with that destination, whatever it draws.
// The last line of a run is `N schedules, M violations`.

func usage() -> Never {
    FileHandle.standardError.write(Data("""
        usage: simulate --seeds N --from S [--disk journalled|noJournal|both] [--threads T] [--plant NAME] [--shrink REPLAYS]
                        [--destination http|s3|tus|sftp]
               simulate --replay SEED [--disk journalled|noJournal] [--plant NAME] [--destination NAME]
        plants: \(Plant.allCases.map(\.rawValue).joined(separator: ", "))

        """.utf8))
    exit(2)
}

var arguments = Array(CommandLine.arguments.dropFirst())
var seeds = 1000
var from: UInt64 = 1
var disk = "both"
var threads = ProcessInfo.processInfo.activeProcessorCount
var replay: UInt64?
var plant: Plant?
var shrink = 150
var destination: String?
while !arguments.isEmpty {
    let flag = arguments.removeFirst()
    guard let value = arguments.first else { usage() }
    arguments.removeFirst()
    switch flag {
    case "--seeds": seeds = Int(value) ?? { usage() }()
    case "--from": from = UInt64(value) ?? { usage() }()
    case "--disk": disk = value
    case "--threads": threads = Int(value) ?? { usage() }()
    case "--replay": replay = UInt64(value) ?? { usage() }()
    case "--plant":
        switch Plant.parse(value) {
        case .success(let named): plant = named
        case .failure(let error):
            FileHandle.standardError.write(Data("simulate: \(error)\n".utf8))
            exit(2)
        }
    case "--shrink": shrink = Int(value) ?? { usage() }()
    case "--destination":
        guard SimulationRunner.destinations.contains(value) else { usage() }
        destination = value
    default: usage()
    }
}
let models = disk == "both" ? SimulationRunner.models : [disk]
guard models.allSatisfy(SimulationRunner.models.contains) else { usage() }

if let replay {
    var violated = false
    for model in models {
        let result = SimulationRunner.replay(seed: replay, model: model, plant: plant, destination: destination)
        print(result.text)
        violated = violated || result.violated
    }
    exit(violated ? 1 : 0)
}

var total = 0
var violations = 0
for model in models {
    let report = SimulationRunner.run(count: seeds, from: from, model: model, threads: threads, plant: plant, shrink: shrink,
                                        destination: destination) { text in
        print(text)
    }
    total += report.schedules
    violations += report.violations.count
    let rate = report.seconds > 0 ? Double(report.schedules) / report.seconds : 0
    print("disk=\(model): \(report.schedules) schedules in \(String(format: "%.1f", report.seconds)) s "
          + "(\(String(format: "%.0f", rate)) per second), \(report.crashes) kill -9, \(report.powerCuts) power cuts, "
          + "\(report.violations.count) violations")
}
print("\(total) schedules, \(violations) violations")
exit(violations == 0 ? 0 : 1)
