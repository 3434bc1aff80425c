// swift-tools-version: 6.2
import PackageDescription

let package = Package(
    name: "Receptionist",
    platforms: [.macOS(.v14), .iOS(.v16), .tvOS(.v16), .watchOS("9.0")],
    targets: [.target(name: "Receptionist")]
)
