// swift-tools-version: 6.2
import PackageDescription

let package = Package(
    name: "Receptionist",
    products: [
        .library(name: "Receptionist", targets: ["Receptionist"])
    ],
    targets: [
        .target(name: "Receptionist"),
        .executableTarget(
            name: "main-queue-demo",
            dependencies: ["Receptionist"],
            path: "Examples/MainQueueDemo"
        ),
        .testTarget(
            name: "ReceptionistTests",
            dependencies: ["Receptionist"]
        ),
    ],
    swiftLanguageModes: [.v6]
)
