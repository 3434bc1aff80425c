// swift-tools-version: 6.2
import PackageDescription

let package = Package(
    name: "Receptionist",
    products: [
        .library(name: "Receptionist", targets: ["Receptionist"])
    ],
    targets: [
        .target(name: "Receptionist"),

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
            dependencies: ["Receptionist"],
            path: "Benchmarks/ReceptionistBenchmarks"
        ),

        .testTarget(
            name: "ReceptionistTests",
            dependencies: ["Receptionist"]
        ),
    ],
    swiftLanguageModes: [.v6]
)
