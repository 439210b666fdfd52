// swift-tools-version:6.0
// orientd: accelerometer orientation service for Linux, and orientcam, its camera companion.
// Dependencies point one way: executables -> composition -> wrappers -> pure core.
import PackageDescription

/// A Debian -dev package providing a system library's headers and pkg-config file.
func apt(_ name: String) -> [SystemPackageProvider] { [.apt([name])] }

let package = Package(
  name: "orientd",
  products: [
    .executable(name: "orientd", targets: ["orientd"]),
    .executable(name: "orient-bench", targets: ["orient-bench"]),
  ],
  targets: [
    // C libraries from Debian, wrapped with their exact pkg-config names.
    .systemLibrary(name: "CDBus", pkgConfig: "dbus-1", providers: apt("libdbus-1-dev")),
    .systemLibrary(name: "CUdev", pkgConfig: "libudev", providers: apt("libudev-dev")),
    .systemLibrary(name: "CIIO", pkgConfig: "libiio", providers: apt("libiio-dev")),
    .systemLibrary(
      name: "CTurboJPEG", pkgConfig: "libturbojpeg", providers: apt("libturbojpeg0-dev")),
    .systemLibrary(name: "CExif", pkgConfig: "libexif", providers: apt("libexif-dev")),
    .systemLibrary(name: "CEvdev", pkgConfig: "libevdev", providers: apt("libevdev-dev")),
    .systemLibrary(name: "CSDL2", pkgConfig: "sdl2", providers: apt("libsdl2-dev")),
    // Macros and variadic functions Swift cannot see (ioctl, signal sets, VIDIOC_*, EVIOC*).
    .target(name: "CLinuxShims"),

    // Pure Swift core: no C, no I/O.
    .target(name: "Orientation"),
    // The quality benchmark's simulator, baselines and metrics (pure, deterministic).
    .target(name: "OrientSim", dependencies: ["Orientation"]),

    // Small shared infrastructure.
    .target(name: "Logging"),
    .target(name: "SystemKit", dependencies: ["CLinuxShims"]),
    .target(name: "JSON"),

    // Executables.
    .executableTarget(
      name: "orientd", dependencies: ["Orientation", "Logging", "SystemKit", "JSON"]),
    .executableTarget(name: "orient-bench", dependencies: ["Orientation", "OrientSim", "JSON"]),

    // Tests. TestSupport holds fixtures shared by integration tests (child processes, private
    // dbus-daemon, temporary directories, locating built executables).
    .target(name: "TestSupport", path: "Tests/TestSupport"),
    .testTarget(name: "OrientationTests", dependencies: ["Orientation"]),
    .testTarget(name: "OrientSimTests", dependencies: ["OrientSim", "Orientation"]),
    .testTarget(
      name: "OrientdTests", dependencies: ["orientd", "Orientation", "JSON", "TestSupport"]),
    .testTarget(name: "SystemKitTests", dependencies: ["SystemKit", "Logging", "TestSupport"]),
    .testTarget(name: "JSONTests", dependencies: ["JSON"]),
  ],
  swiftLanguageModes: [.v6]
)
