// swift-tools-version: 6.2
import PackageDescription

let package = Package(
    name: "Receptionist",
    platforms: [.macOS(.v13), .iOS(.v16), .tvOS(.v16), .watchOS(.v9), .visionOS(.v1)],
    products: [.library(name: "Receptionist", targets: ["Receptionist"])],
    targets: [
        // .target(name: "Receptionist", swiftSettings: [.define("LINUX_SYNC")]) -- a comment
        .target(
            name: "Receptionist",
            swiftSettings: [
                .define(
                    "APPLE_SYNC",
                    .when(platforms: [.macOS, .macCatalyst, .iOS, .tvOS, .watchOS, .visionOS, .driverKit, .windows])
                ),
                .define("LINUX_SYNC", .when(platforms: [.linux, .android])),
                .define("MAC_ONLY", .when(platforms: [.macOS])),
                .define("EVERYWHERE"),
                .define("RELEASE_ONLY", .when(configuration: .release)),
                .define("TRAIT_ONLY", .when(traits: ["Fast"])),
            ]
        ),
        .testTarget(name: "ReceptionistTests", dependencies: [.target(name: "Receptionist")]),
    ]
)
