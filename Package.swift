// swift-tools-version:6.0
import PackageDescription

// Layers, lowest first; each target may import only those below it, and the compiler holds
// the direction (docs/architecture.md):
//   UploaderValues ← UploaderSupport ← UploaderConfig ← UploaderTransfer, UploaderWatch
//   UploaderValues ← UploaderDecisions
//   UploaderConfig, UploaderDecisions ← UploaderSpool
//   all of the above ← UploaderCore ← UploaderDaemon ← UploaderCommands ← uploader
// UploaderDecisions, the pure transition function and the spool's planner, depends on
// UploaderValues alone: no file
// system, transport, watcher or thread module. `CoreFenceTests` holds that list and the
// sources of both, where the compiler does not (undeclared imports, libc via Foundation).
let layers: [Target.Dependency] = ["UploaderValues", "UploaderSupport", "UploaderConfig", "UploaderSpool", "UploaderTransfer",
                                   "UploaderWatch", "UploaderDecisions", "UploaderCore", "UploaderDaemon", "UploaderCommands"]

let package = Package(
    name: "uploader",
    products: [
        .executable(name: "uploader", targets: ["uploader"]),
        .executable(name: "simulate", targets: ["simulate"]),
    ],
    targets: [
        .systemLibrary(
            name: "CCurl",
            pkgConfig: "libcurl",
            providers: [.apt(["libcurl4-openssl-dev"])]
        ),
        .systemLibrary(
            name: "CInotifyTools",
            providers: [.apt(["libinotifytools0-dev"])]
        ),
        .systemLibrary(
            name: "COpenSSL",
            pkgConfig: "libcrypto",
            providers: [.apt(["libssl-dev"])]
        ),
        .target(name: "CSysShims"),
        /// Values only, no I/O: paths, timestamps, log levels, upload order and windows, the
        /// manifest as a record, where a file sits, a route lookup's answer.
        .target(name: "UploaderValues"),
        /// File system, logger, clock, SHA-256, mailbox: what every layer uses (re-exports the values).
        .target(name: "UploaderSupport", dependencies: ["UploaderValues", "COpenSSL", "CSysShims"]),
        /// uploader.conf → typed `Profile` values.
        .target(name: "UploaderConfig", dependencies: ["UploaderSupport"]),
        /// Manifests, claims, the durable moves (planned in UploaderDecisions, performed here),
        /// recovery, census, the spool lock.
        .target(name: "UploaderSpool", dependencies: ["UploaderSupport", "UploaderConfig", "UploaderDecisions"]),
        /// Requests over libcurl, S3, dispositions, reachability probe and rtnetlink; never a manifest.
        .target(name: "UploaderTransfer", dependencies: ["UploaderSupport", "UploaderConfig", "CCurl", "CSysShims"]),
        /// inotify on one thread.
        .target(name: "UploaderWatch", dependencies: ["UploaderSupport", "UploaderConfig", "CInotifyTools"]),
        /// The pure transition function (`ProfileCore.step`) and what it decides with, and the
        /// spool's planner (`SpoolPlan/`: a move's disk steps as data): values in, values out. Only value targets here; `CoreFenceTests` fails on anything else.
        .target(name: "UploaderDecisions", dependencies: ["UploaderValues"]),
        /// The owner of each profile, the executor, hooks: they carry the decisions out.
        .target(name: "UploaderCore",
                dependencies: ["UploaderSupport", "UploaderConfig", "UploaderSpool", "UploaderTransfer", "UploaderWatch",
                               "UploaderDecisions"]),
        /// The process: profiles started and stopped, signals, reload, state file, metrics, systemd.
        .target(name: "UploaderDaemon",
                dependencies: ["UploaderSupport", "UploaderConfig", "UploaderSpool", "UploaderTransfer", "UploaderWatch", "UploaderCore"]),
        /// Commands: run, status, retry, enqueue, check-config, help.
        .target(name: "UploaderCommands",
                dependencies: ["UploaderSupport", "UploaderConfig", "UploaderSpool", "UploaderTransfer", "UploaderWatch", "UploaderCore",
                               "UploaderDaemon"]),
        .executableTarget(name: "uploader", dependencies: ["UploaderCommands"]),
        .testTarget(name: "UploaderCoreTests", dependencies: layers, exclude: ["Fixtures"]),
        .testTarget(name: "IntegrationTests", dependencies: layers),
        /// The deterministic simulator: a disk that can lose power (`SimDisk`) and the driver that
        /// runs the real spool, transition function and runner on it (issue #13).
        /// The deterministic simulator (issue #13): simulated disk, network and clock around the real core.
        .target(name: "UploaderSimulation", dependencies: layers, path: "Tests/Simulation"),
        .executableTarget(name: "simulate", dependencies: ["UploaderSimulation"], path: "Tests/SimulationMain"),
        .testTarget(name: "SimulationTests", dependencies: ["UploaderSimulation"] + layers),
    ],
    swiftLanguageModes: [.v6]
)
