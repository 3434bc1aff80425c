// swift-tools-version: 6.2
import PackageDescription

let package = Package(
    name: "Receptionist",
    // The floor is where `Duration` (in public signatures) exists. Newer APIs are gated per
    // declaration with `@available` (Observation: macOS 14 / iOS 17 / tvOS 17 / watchOS 10); the
    // locks and atomics need nothing newer (Sources/Receptionist/Support). Checked on Linux by
    // .ci/check-apple-availability.
    platforms: [.macOS(.v13), .iOS(.v16), .tvOS(.v16), .watchOS(.v9), .visionOS(.v1)],
    products: [
        .library(name: "Receptionist", targets: ["Receptionist"])
    ],
    targets: [
        .target(name: "Receptionist", dependencies: ["CReceptionistSync"]),
        // C11 atomics for the portable synchronisation path (Support/AtomicValue.swift).
        .target(name: "CReceptionistSync"),

        // Example command-line demos: `swift run <name> --help`.
        .target(name: "DemoSupport", path: "Examples/DemoSupport"),
        .executableTarget(
            name: "main-queue-demo",
            dependencies: ["Receptionist", "DemoSupport"],
            path: "Examples/MainQueueDemo"
        ),
        .executableTarget(
            name: "sensor-batching-demo",
            dependencies: ["Receptionist", "DemoSupport"],
            path: "Examples/SensorBatchingDemo"
        ),
        .executableTarget(
            name: "observers-demo",
            dependencies: ["Receptionist", "DemoSupport"],
            path: "Examples/ObserversDemo"
        ),

        // `swift run -c release receptionist-benchmarks --help`
        .executableTarget(
            name: "receptionist-benchmarks",
            // CReceptionistSync: the contention section times the library's futex lock bare.
            dependencies: ["Receptionist", "CReceptionistSync"],
            path: "Benchmarks/ReceptionistBenchmarks"
        ),

        .testTarget(
            name: "ReceptionistTests",
            dependencies: ["Receptionist"]
        ),
    ],
    swiftLanguageModes: [.v6]
)
