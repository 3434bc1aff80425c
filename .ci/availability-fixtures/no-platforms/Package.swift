// swift-tools-version: 6.2
import PackageDescription

// platforms: [.macOS(.v13)] -- a comment does not count
let package = Package(
    name: "Receptionist",
    targets: [.target(name: "Receptionist")]
)
