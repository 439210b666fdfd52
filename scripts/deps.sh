#!/usr/bin/env bash
# Installs every Debian package that building, testing and the demo need.
# Idempotent: packages already installed are skipped, and apt is not touched at all when
# nothing is missing. Must run as root on Debian 12 (CI does); otherwise prints what to install.
set -euo pipefail

# Build: the C libraries behind the .systemLibrary targets (see Package.swift).
BUILD_PKGS=(
  pkg-config
  scdoc             # manual pages (man/*.scd), built by scripts/install.sh and the packages
  libudev-dev       # CUdev: discovery and hotplug
  libiio-dev        # CIIO: libiio, used only by the read-path benchmark (iio-read-bench)
  libdbus-1-dev     # CDBus: the bus layer
  libturbojpeg0-dev # CTurboJPEG: lossless rotation, encoding
  libexif-dev       # CExif: EXIF blocks
  libevdev-dev      # CEvdev: volume-key shutter
  libsdl2-dev       # CSDL2: live preview window
  libx11-dev libxrandr-dev libxi-dev  # CX11/CXRandR/CXInput: orientd rotate on X11
  libdrm-dev        # CDRM: orientd rotate reads the panel's DRM "panel orientation"
  libcamera-dev     # CLibcamera/LibcameraBridge: orientcam's libcamera source (C++17, 0.0.3)
  g++               # LibcameraBridge is C++: SwiftPM compiles it with clang, linked against libstdc++
  libdlib-dev       # CFaceDetect: orientd-face's face detector (dlib's frontal HOG detector)
)
# Tests and demo: real parts instead of mocks.
TEST_PKGS=(
  dbus                 # dbus-daemon for private buses
  umockdev             # umockdev-run, umockdev-wrapper, emulated sysfs/udev/evdev
  libumockdev-dev      # libumockdev for the hotplug test driver
  gir1.2-umockdev-1.0  # libumockdev from Python (hotplug driver)
  python3-gi
  python3-pip python3-pandas  # scripts/recordings.py: fetch and read the real recordings
  iio-sensor-proxy     # monitor-sensor (compat client) and the daemon we compare against
  udev                 # systemd's 60-sensor.hwdb, udevadm
  systemd              # systemd-analyze security
  libjpeg-turbo-progs  # jpegtran / djpeg for the benchmarks and decode checks
  exiftran fswebcam    # benchmark peers
  time                 # /usr/bin/time -f %M: peak memory in scripts/bench/capture.sh
  xvfb xdotool         # preview tests (private X server, clicks)
  x11-apps             # xwd: screenshots in the preview tests
  qemu-system-x86 busybox-static cpio kmod  # the real-kernel test VM
  v4l-utils libiio-utils
  procps psmisc
  sway wlr-randr       # orientd rotate: a real headless sway (IPC, outputs, wlr-randr)
  seatd                # orientd rotate: sway on libinput in the VM (rotate-touch) gets its seat from seatd
  xserver-xephyr x11-xserver-utils xinput  # orientd rotate on X11: Xephyr rotates (Xorg dummy does not)
  xserver-xorg-core xserver-xorg-input-libinput  # the VM's rotate-x11: real Xorg (modesetting) on libinput devices
  jq                   # scripts/fuzz.sh reads the module graph from `swift package dump-package`
  tmux                 # the interactive orientd calibrate test (send-keys, capture-pane)
  i2c-tools            # i2cset: the VM's orientd-imu puts a BMI160's registers into i2c-stub
  libinput-tools       # libinput debug-events: the VM sees orientd's tablet-mode switch as libinput does
  polkitd              # PolkitTests: the real verdicts on net.hadess.SensorProxy claims (private bus)
  libcamera-tools      # cam: the VM's orientcam-libcamera test takes a reference frame with libcamera's own tool
  libcamera-ipa        # libcamera's IPA modules: its vimc pipeline (the VM) will not start a camera without one
  python3-dbusmock python3-psutil  # iio-sensor-proxy 3.9.0's own integration tests (Tests/Upstream); logind and power-profiles-daemon stand-ins (FaceDaemonTests, SuggestTests)
  python3-skimage python-matplotlib-data  # FaceTests: public-domain photographs (astronaut, Grace Hopper, no-face pictures, LFW crops)
  python3-pil          # FaceTests: turns the photographs four ways (a tool that is not orientd's)
)

missing=()
for p in "${BUILD_PKGS[@]}" "${TEST_PKGS[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "deps: all ${#BUILD_PKGS[@]}+${#TEST_PKGS[@]} Debian packages present"
  exit 0
fi

echo "deps: installing ${missing[*]}"
if [ "$(id -u)" -ne 0 ]; then
  echo "deps: not root; run as root: apt-get install ${missing[*]}" >&2
  exit 69
fi
export DEBIAN_FRONTEND=noninteractive
apt-get -o DPkg::Lock::Timeout=600 update -qq
apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends "${missing[@]}"
