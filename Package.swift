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
    .executable(name: "orientd-rotate", targets: ["orientd-rotate"]),
    .executable(name: "orientcam", targets: ["orientcam"]),
    .executable(name: "orient-bench", targets: ["orient-bench"]),
    // orientcam's libcamera plugin, loaded with dlopen when a libcamera camera is asked for
    // (LibcameraKit.LibcameraPlugin): programs start without loading libcamera.
    .library(name: "orientcam-libcamera", type: .dynamic, targets: ["LibcameraBridge"]),
    .executable(name: "orientd-face", targets: ["orientd-face"]),
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
    // orientd rotate on X11: Xlib, RandR (output rotation), XInput2 (touch matrices).
    .systemLibrary(name: "CX11", pkgConfig: "x11", providers: apt("libx11-dev")),
    .systemLibrary(name: "CXRandR", pkgConfig: "xrandr", providers: apt("libxrandr-dev")),
    .systemLibrary(name: "CXInput", pkgConfig: "xi", providers: apt("libxi-dev")),
    // orientd rotate: the panel's mounting from the DRM connector's "panel orientation".
    .systemLibrary(name: "CDRM", pkgConfig: "libdrm", providers: apt("libdrm-dev")),
    // Macros and variadic functions Swift cannot see (ioctl, signal sets, VIDIOC_*, EVIOC*).
    .target(name: "CLinuxShims"),
    // libcamera (C++17 only, no C API): its pkg-config flags feed LibcameraBridge, a small C++
    // target with a C API (Swift's C++ interop cannot import CameraManager, Camera, Request, and
    // Camera::requestCompleted needs a C++ slot), built as the plugin orientcam-libcamera. The
    // API's header is a module of its own (CLibcameraAPI), which LibcameraKit imports without
    // linking libcamera.
    .systemLibrary(
      name: "CLibcamera", pkgConfig: "libcamera", providers: apt("libcamera-dev")),
    .systemLibrary(name: "CLibcameraAPI"),
    .target(name: "LibcameraBridge", dependencies: ["CLibcamera", "CLibcameraAPI"]),
    // orientd-face: dlib's frontal face detector (libdlib-dev, pkg-config dlib-1) behind a C
    // API (C++17). Optimised even in debug builds: dlib's HOG scan at -O0 is ~10x slower.
    // Linked only into orientd-face, never into the daemon (docs/face.md).
    .target(
      name: "CFaceDetect",
      cxxSettings: [.unsafeFlags(["-O2", "-std=c++17"])],
      // dlib's headers call LAPACK and BLAS from the code they instantiate here (dlib-1.pc).
      linkerSettings: [.linkedLibrary("dlib"), .linkedLibrary("lapack"), .linkedLibrary("blas")]),

    // Pure Swift text formats: the INI configuration file, locale-free decimals, trimming,
    // substring search (without _StringProcessing: docs/benchmark.md "Memory").
    .target(name: "TextFormats"),
    // Pure Swift core: no C, no I/O.
    .target(name: "OrientCore", dependencies: ["TextFormats"]),
    // Pure Swift image buffers, pixel formats, rotations and the orientation test pattern.
    .target(name: "Imaging"),
    // The quality benchmark's simulator, baselines and metrics (pure, deterministic).
    .target(name: "OrientSim", dependencies: ["OrientCore", "TextFormats"]),

    // Small shared infrastructure.
    .target(name: "OrientLog"),
    .target(name: "SystemKit", dependencies: ["CLinuxShims"]),
    .target(name: "JSON"),

    // Camera companion: wrappers (TurboJPEG + libexif, V4L2 ioctls), then the composition.
    .target(name: "JPEGKit", dependencies: ["CTurboJPEG", "CExif", "Imaging"]),
    .target(name: "V4L2Kit", dependencies: ["CLinuxShims", "SystemKit", "Imaging"]),
    // libcamera cameras (phones' ISPs, IPU3 laptops, UVC): manager, streaming, the orientation
    // arithmetic (LibcameraOrientation, pure). Used by Capture's LibcameraSource.
    .target(name: "LibcameraKit", dependencies: ["CLibcameraAPI", "Imaging", "SystemKit"]),
    .target(
      name: "Capture",
      dependencies: [
        "Imaging", "JPEGKit", "V4L2Kit", "LibcameraKit", "OrientCore", "TextFormats", "SystemKit",
        "OrientLog", "JSON",
      ]),

    // Overlay controls: file format, layout per orientation, rendering (pure).
    .target(name: "Overlay", dependencies: ["JSON", "OrientCore", "Imaging"]),
    // Face finding for orientd-face: grayscale pictures, dlib's detector, the four quarter
    // turns, image files.
    .target(
      name: "FaceDetection", dependencies: ["CFaceDetect", "Imaging", "JPEGKit", "OrientCore"]),
    // Session wrappers: libevdev key devices (grab, uinput re-emission) and the SDL2 preview.
    .target(name: "EvdevKit", dependencies: ["CEvdev", "CLinuxShims", "SystemKit", "OrientLog"]),
    .target(name: "PreviewKit", dependencies: ["CSDL2", "Imaging", "Overlay"]),
    // The persistent camera session: one event loop for frames, triggers, orientation, preview.
    .target(
      name: "Session",
      dependencies: [
        "Capture", "Overlay", "EvdevKit", "PreviewKit", "Imaging", "JPEGKit", "OrientCore",
        "TextFormats", "SystemKit", "OrientLog", "JSON", "V4L2Kit",
      ]),

    // Wrappers over C libraries.
    .target(name: "DBusKit", dependencies: ["CDBus", "SystemKit", "OrientLog"]),
    // Wrappers: libudev discovery and hotplug; IIO accelerometers from udev device to samples.
    .target(name: "DeviceDiscovery", dependencies: ["CUdev", "SystemKit"]),
    .target(
      name: "Sensors",
      dependencies: [
        "DeviceDiscovery", "SystemKit", "OrientLog", "OrientCore", "TextFormats", "JSON",
        "EvdevKit",
        "CEvdev", "CLinuxShims",
      ]),

    // The D-Bus contract, spelt once: bus names, paths, interfaces, properties, claim methods.
    .target(name: "OrientWire", dependencies: ["DBusKit"]),
    // The D-Bus client of orientd (and iio-sensor-proxy): orientd --watch/--get, orientcam.
    .target(
      name: "OrientClient",
      dependencies: ["DBusKit", "OrientWire", "SystemKit", "OrientLog", "OrientCore"]),

    // Composition: one event loop, the sensor, the detector, both D-Bus APIs and the claims.
    .target(
      name: "OrientDaemon",
      dependencies: [
        "Sensors", "DBusKit", "OrientWire", "DeviceDiscovery", "OrientCore", "TextFormats",
        "SystemKit", "OrientLog", "EvdevKit", "CEvdev", "FaceClient",
      ]),

    // orientd rotate: sway IPC, wlr-randr, hooks, rotation lock, touch discovery, tablet mode.
    .target(
      name: "ScreenRotation",
      dependencies: [
        "DeviceDiscovery", "EvdevKit", "CEvdev", "CLinuxShims", "SystemKit", "OrientCore",
        "OrientLog", "JSON",
      ]),
    .target(name: "X11Rotation", dependencies: ["CX11", "CXRandR", "CXInput", "ScreenRotation"]),
    // Wrapper: libdrm, read-only (KMS connectors and their "panel orientation").
    .target(name: "DRMKit", dependencies: ["CDRM", "SystemKit"]),

    // Executables.
    .executableTarget(
      name: "orientd",
      dependencies: [
        "OrientCore", "TextFormats", "OrientLog", "SystemKit", "JSON", "DeviceDiscovery",
        "Sensors", "DBusKit", "OrientWire", "OrientClient", "OrientDaemon", "FaceClient",
      ]),
    // orientd rotate, exec'd by orientd: its own program so the root daemon maps no X11/xcb
    // library. Installed in PREFIX/libexec/orientd (Debian package orientd-rotate).
    .executableTarget(
      name: "orientd-rotate",
      dependencies: [
        "OrientCore", "OrientLog", "SystemKit", "JSON", "DeviceDiscovery", "DBusKit",
        "OrientWire", "OrientClient", "ScreenRotation", "X11Rotation", "DRMKit",
      ]),
    // Asks orientd-face about a proposed rotation on an event loop, with a hard timeout (the
    // client side of the face resolver; `orientd replay --face-camera`, later the daemon).
    .target(
      name: "FaceClient",
      dependencies: ["OrientCore", "SystemKit", "OrientLog", "JSON", "CLinuxShims"]),
    // orientd-face: finds which way a face's head points (detect), and answers the daemon's
    // face resolver from the front camera (resolve). Its own program: the daemon never links
    // a face detector or opens a camera (Debian package orientd-face).
    .executableTarget(
      name: "orientd-face",
      dependencies: [
        "FaceDetection", "Capture", "V4L2Kit", "Imaging", "JPEGKit", "OrientCore", "JSON",
        "SystemKit", "OrientLog",
      ]),
    // Compares libiio with orientd's pread path on the same (emulated) accelerometer.
    .executableTarget(
      name: "iio-read-bench", dependencies: ["CIIO", "Sensors", "SystemKit"],
      path: "Benchmarks/iio-read-bench"),
    .executableTarget(
      name: "orientcam",
      dependencies: [
        "Capture", "Session", "Overlay", "Imaging", "OrientLog", "OrientClient", "OrientCore",
        "DBusKit", "SystemKit", "EvdevKit", "V4L2Kit",
      ]),
    .executableTarget(
      name: "orient-bench", dependencies: ["OrientCore", "OrientSim", "JSON", "SystemKit"],
      path: "Benchmarks/orient-bench"),
    // The fusion's angle error (simulated motion, real IMU recordings), its throughput and the
    // motion stream's fan-out (scripts/bench/motion.sh, docs/motion.md).
    .executableTarget(
      name: "motion-bench", dependencies: ["OrientCore", "OrientSim", "SystemKit"],
      path: "Benchmarks/motion-bench"),
    // Many clients claiming, releasing and vanishing at once (scripts/bench/claims.sh).
    .executableTarget(
      name: "claims-bench", dependencies: ["DBusKit", "OrientWire", "SystemKit", "JSON"],
      path: "Benchmarks/claims-bench"),

    // Turn to output transform applied: orientd rotate on a headless sway vs rot8's polling
    // (scripts/bench/rotate.sh). Uses the test fixtures (private bus, umockdev, sway).
    .executableTarget(
      name: "rotate-bench", dependencies: ["TestSupport", "ScreenRotation", "SystemKit", "JSON"],
      path: "Benchmarks/rotate-bench"),

    // Tests. TestSupport holds fixtures shared by integration tests (child processes, private
    // dbus-daemon, temporary directories, locating built executables).
    .target(name: "TestSupport", dependencies: ["JSON", "SystemKit"], path: "Tests/TestSupport"),
    // The `.ownThreads` suite trait: blocking integration tests run on a pool of their own
    // instead of the runtime's CPU-wide cooperative pool (Tests/TestThreads/TestThreads.swift).
    .target(name: "TestThreads", path: "Tests/TestThreads"),
    // Runs the sensor layer (SensorHub) under a umockdev testbed for SensorsTests (stdin commands).
    .executableTarget(
      name: "accel-probe",
      dependencies: [
        "Sensors", "DeviceDiscovery", "OrientCore", "TextFormats", "SystemKit", "OrientLog",
        "JSON",
      ],
      path: "Tests/Helpers/accel-probe"),
    .testTarget(name: "TextFormatsTests", dependencies: ["TextFormats"]),
    .testTarget(name: "OrientCoreTests", dependencies: ["OrientCore", "TextFormats"]),
    .testTarget(name: "OrientSimTests", dependencies: ["OrientSim", "OrientCore"]),
    .testTarget(
      name: "OrientdTests",
      dependencies: [
        "orientd", "OrientCore", "OrientSim", "TextFormats", "JSON", "SystemKit", "TestSupport",
        "TestThreads",
      ]),
    .testTarget(
      name: "OrientdRotateTests",
      dependencies: ["orientd-rotate", "OrientCore", "SystemKit", "ScreenRotation", "DRMKit"]),
    .testTarget(
      name: "SystemKitTests",
      dependencies: ["SystemKit", "OrientLog", "TestSupport", "TestThreads"]),
    .testTarget(name: "JSONTests", dependencies: ["JSON"]),
    .testTarget(
      name: "DBusKitTests",
      dependencies: ["DBusKit", "SystemKit", "OrientLog", "JSON", "TestSupport", "TestThreads"]),
    .testTarget(
      name: "DeviceDiscoveryTests",
      dependencies: ["DeviceDiscovery", "SystemKit", "TestSupport", "TestThreads"]),
    .testTarget(
      name: "SensorsTests",
      dependencies: [
        "Sensors", "EvdevKit", "CEvdev", "OrientCore", "TextFormats", "SystemKit", "JSON",
        "TestSupport", "TestThreads",
      ]),
    .testTarget(
      name: "OrientClientTests",
      dependencies: [
        "OrientClient", "OrientWire", "DBusKit", "SystemKit", "OrientLog", "OrientCore",
        "TestSupport", "TestThreads",
      ]),
    .testTarget(
      name: "OrientDaemonTests",
      dependencies: [
        "OrientDaemon", "OrientWire", "OrientClient", "DBusKit", "SystemKit", "OrientLog",
        "OrientCore", "TextFormats", "JSON", "TestSupport", "TestThreads", "FaceClient",
      ]),
    .testTarget(name: "ScreenRotationTests", dependencies: ["ScreenRotation", "OrientCore"]),
    .testTarget(name: "ImagingTests", dependencies: ["Imaging"]),
    .testTarget(
      name: "JPEGKitTests", dependencies: ["JPEGKit", "Imaging", "TestSupport", "TestThreads"]),
    .testTarget(name: "V4L2KitTests", dependencies: ["V4L2Kit", "Imaging"]),
    .testTarget(
      name: "LibcameraKitTests", dependencies: ["LibcameraKit", "CLibcameraAPI", "Imaging"]),
    .testTarget(
      name: "OverlayTests", dependencies: ["Overlay", "Imaging", "JSON", "OrientCore"]),
    .testTarget(
      name: "SessionTests",
      dependencies: [
        "Session", "Overlay", "EvdevKit", "Capture", "Imaging", "JPEGKit", "JSON", "OrientCore",
        "TestSupport", "TestThreads",
      ],
      // umockdev fixtures (evdev volume keys), read from the source tree by the tests.
      exclude: ["Fixtures"]),
    .testTarget(
      name: "CaptureTests",
      dependencies: [
        "Capture", "Imaging", "JPEGKit", "V4L2Kit", "LibcameraKit", "OrientCore", "JSON",
        "OrientLog", "TestSupport", "TestThreads", "SystemKit", "orientcam",
      ]),
    // orientd-face on real photographs from Debian packages, the resolver with a file
    // camera, the pure face geometry and resolver, the client's hard timeout.
    .testTarget(
      name: "FaceTests",
      dependencies: [
        "orientd-face", "FaceDetection", "FaceClient", "OrientCore", "TextFormats", "Imaging",
        "SystemKit", "OrientLog", "JSON", "TestSupport", "TestThreads",
      ]),
    // orientcam's option parsers (Sources/orientcam/Options.swift), as OrientdTests for orientd.
    .testTarget(
      name: "OrientcamTests",
      dependencies: ["orientcam", "Capture", "Session", "OrientCore", "V4L2Kit", "Imaging"]),
  ],
  swiftLanguageModes: [.v6],
  // LibcameraBridge: libcamera's headers are C++17.
  cxxLanguageStandard: .cxx17
)
