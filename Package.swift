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
        .target(
            name: "Receptionist",
            dependencies: ["CReceptionistSync"],
            // Which lock and atomics the library uses: the platform half of the choice, stated
            // only here (the implementations, and the -Xswiftc -D flags that override these
            // defines: Sources/Receptionist/Support/Locked.swift, "Three implementations").
            swiftSettings: [
                // pthread_mutex_t (SRWLOCK on Windows) and C11 atomics, which every deployment
                // target has (Synchronization's Mutex and Atomic need macOS 15 / iOS 18).
                .define(
                    "RECEPTIONIST_PORTABLE_SYNC",
                    .when(platforms: [.macOS, .macCatalyst, .iOS, .tvOS, .watchOS, .visionOS, .driverKit, .windows])
                ),
                // The futex mutex of CReceptionistSync and Synchronization's Atomic. Platforms
                // with neither define use Synchronization's Mutex and Atomic.
                .define("RECEPTIONIST_FUTEX", .when(platforms: [.linux, .android])),
            ]
        ),
        // C11 atomics for the portable synchronisation path (Support/AtomicValue.swift), and the
        // futex mutex on Linux and Android (Support/PlatformLock.swift).
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
