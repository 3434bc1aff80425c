// swift-tools-version: 6.2
import PackageDescription

let package = Package(
    name: "Receptionist",
    platforms: [.macOS(.v13), .iOS(.v16), .tvOS(.v16), .watchOS(.v9), .visionOS(.v1)],
    products: [.library(name: "Receptionist", targets: ["Receptionist"])],
    targets: [.target(name: "Receptionist")]
)
