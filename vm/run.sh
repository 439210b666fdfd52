#!/usr/bin/env bash
# Runs the guest tests (vm/guest/tests/) in a QEMU virtual machine on Debian's current kernel, so
# that orientd and orientcam are tested against the real kernel drivers (HID sensor hub + IIO,
# vivid V4L2, uinput + evdev) and not only against emulated sysfs.
#
# usage: vm/run.sh [--systemd] [--keep] [--shell] [--list] [--help] [TEST...]
#   TEST      guest tests to run (see --list; a test that shares its script with others runs them
#             all); default: all of them, in order, except those whose script says
#             "# on-request" in its header (studies of the harness, run only when named).
#   --systemd the guest boots systemd as PID 1 on a writable overlay of the host's root and runs
#             the tests in guest/systemd-tests/ (the Debian packages as users get them: the .debs
#             in .build/deb from scripts/build-deb.sh, ORIENTD_VM_DEBS, are installed in it).
#   --keep    after the tests, keep the guest up with a shell on this terminal (exit powers off).
#   --shell   boot straight into a guest shell, no tests (interactive debugging).
#   --list    print the guest test names and exit.
#
# What it does, every step idempotent:
#   1. installs qemu-system-x86, busybox-static, cpio, kmod and the guest's tools when missing;
#   2. resolves the kernel package that Debian's linux-image-amd64 currently depends on (apt-cache;
#      nothing is pinned), downloads and extracts it into the cache unless that exact package
#      version is there already, and runs depmod;
#   3. builds a busybox initramfs that mounts the 9p shares and switches root to the host's root,
#      and compiles the host's hwdb with the test entry the guest's udev uses;
#   4. boots QEMU (TCG, no KVM needed) with the host root shared read-only, the project tree and
#      the build products read-only, and a writable results folder;
#   5. prints one "VM TEST name: PASS|FAIL|SKIP (seconds)" line per guest test as it finishes.
#
# Environment:
#   ORIENTD_VM_CACHE    kernel and initramfs cache (default /var/cache/orientd-vm as root,
#                       else ${XDG_CACHE_HOME:-~/.cache}/orientd-vm)
#   ORIENTD_VM_OUT      logs and artefacts (default .build/vm/out, with --systemd
#                       .build/vm/out-systemd; wiped at the start of a run)
#   ORIENTD_VM_DEBS     --systemd: the folder with the orientd, orientd-rotate, orientcam .debs, in the
#                       project tree (default .build/deb)
#   ORIENTD_VM_BIN      where orientd/orientcam were built (default: swift's debug bin path)
#   ORIENTD_VM_MEM      guest memory in MiB (default 768)     ORIENTD_VM_SMP  vCPUs (default 2)
#   ORIENTD_VM_TIMEOUT  seconds before the whole VM is killed (default: the selected tests'
#                       limits added up, plus 180 s for the boot, 300 s with --systemd)
#   ORIENTD_VM_QEMU     the QEMU binary (default qemu-system-x86_64)
#   ORIENTD_VM_APPEND   more kernel command-line arguments (debugging: "loglevel=7 no_console_suspend")
#   CI=true             never skip: a QEMU that cannot run is a failure, and so is a product check
#                       that would be skipped (the test command builds the products first).
#
# Exit codes: 0 all guest tests passed or were skipped for a missing product (not under CI=true);
# 1 a guest test failed, the guest did not finish, or the VM could not be prepared; 64 usage;
# 77 QEMU cannot run on this machine (never under CI=true).
set -euo pipefail
trap 'echo "vm/run.sh: line $LINENO: \"$BASH_COMMAND\" failed" >&2' ERR

root=$(cd "$(dirname "$0")/.." && pwd)
vmdir=$root/vm
tests_dir=$vmdir/guest/tests
started=$(date +%s.%N)

say() { printf 'vm: %s\n' "$*"; }
die() {
  printf 'vm: error: %s\n' "$*" >&2
  exit 1
}
elapsed() { awk -v a="$1" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }'; }

# Guest test scripts, in run order: tests/NN-name.sh -> name.
all_tests() {
  local f
  for f in "$tests_dir"/[0-9][0-9]-*.sh; do
    f=${f##*/}
    f=${f#[0-9][0-9]-}
    echo "${f%.sh}"
  done
}
# Whether a script runs only when named ("# on-request" in its header).
on_request() { grep -q '^# on-request' "$tests_dir"/[0-9][0-9]-"$1".sh; }
# The scripts of the default run, in order.
default_tests() {
  local t
  for t in $(all_tests); do on_request "$t" || echo "$t"; done
}
# The tests a script reports: its "# parts:" (one script sharing a set-up between several
# tests), or just its name.
reported() {
  local parts
  parts=$(sed -n 's/^# parts: *//p' "$tests_dir"/[0-9][0-9]-"$1".sh | head -1)
  echo "${parts:-$1}"
}
# The script that reports test NAME (a script name or one of its parts).
script_of() {
  local t
  for t in $(all_tests); do
    if [ "$t" = "$1" ] || [[ " $(reported "$t") " == *" $1 "* ]]; then
      echo "$t"
      return 0
    fi
  done
  return 1
}

usage() { sed -n '2,/^set -euo/{/^#/s/^# \{0,1\}//p}' "$0"; }

mode=tests
init=bash
# --systemd first (it chooses the tests the other arguments name).
for arg in "$@"; do
  if [ "$arg" = --systemd ]; then
    init=systemd
    tests_dir=$vmdir/guest/systemd-tests
  fi
done
selected=()
while [ $# -gt 0 ]; do
  case $1 in
    --systemd) ;;
    --keep) mode=keep ;;
    --shell) mode=shell ;;
    --list)
      for t in $(all_tests); do
        note=""
        on_request "$t" && note=" (on request: not in the default run)"
        if [ "$(reported "$t")" = "$t" ]; then echo "$t$note"; else echo "$t: $(reported "$t")$note"; fi
      done
      exit 0
      ;;
    -h | --help)
      usage
      exit 0
      ;;
    -*)
      echo "vm/run.sh: unknown option '$1' (see vm/run.sh --help)" >&2
      exit 64
      ;;
    *)
      if ! script=$(script_of "$1"); then
        echo "vm/run.sh: no guest test named '$1' (vm/run.sh --list shows them)" >&2
        exit 64
      fi
      [[ " ${selected[*]} " == *" $script "* ]] || selected+=("$script")
      ;;
  esac
  shift
done
[ ${#selected[@]} -gt 0 ] || mapfile -t selected < <(default_tests)

if [ "$(id -u)" -eq 0 ]; then
  cache=${ORIENTD_VM_CACHE:-/var/cache/orientd-vm}
else
  cache=${ORIENTD_VM_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/orientd-vm}
fi
if [ $init = systemd ]; then
  out=${ORIENTD_VM_OUT:-$root/.build/vm/out-systemd}
  debs=${ORIENTD_VM_DEBS:-$root/.build/deb}
  debs=$(cd "$debs" 2>/dev/null && pwd -P) || die "no folder $debs: build the packages first (scripts/build-deb.sh)"
  compgen -G "$debs/orientd_*.deb" >/dev/null ||
    die "no orientd_*.deb in $debs: build the packages first (scripts/build-deb.sh)"
  case $debs/ in
    "$(cd "$root" && pwd -P)"/*) ;;
    *) die "ORIENTD_VM_DEBS ($debs) must be inside the project tree (the guest sees only that)" ;;
  esac
else
  out=${ORIENTD_VM_OUT:-$root/.build/vm/out}
fi
mem=${ORIENTD_VM_MEM:-768}
smp=${ORIENTD_VM_SMP:-2}
# The whole VM's limit: the guest enforces each test's own "# timeout:" (default 90), so a guest
# that takes every test to its limit still finishes within their sum; the rest is the boot (with
# --systemd a full boot, and apt-get reading dpkg's database over 9p) and the power-off. This
# catches a guest that hangs outside a test; a test that hangs is the guest's to stop.
test_limits=0
for t in "${selected[@]}"; do
  l=$(sed -n 's/^# timeout: *\([0-9][0-9]*\).*/\1/p' "$tests_dir"/[0-9][0-9]-"$t".sh | head -1)
  test_limits=$((test_limits + ${l:-90}))
done
boot_allowance=180
[ $init = bash ] || boot_allowance=300
vm_timeout=${ORIENTD_VM_TIMEOUT:-$((boot_allowance + test_limits))}
ci=false
case ${CI:-} in true | 1 | yes) ci=true ;; esac

# The products: swift's bin path is .build/<triple>/debug, with .build/debug linking to it.
bin=${ORIENTD_VM_BIN:-$root/.build/debug}
[ -d "$bin" ] && bin=$(cd "$bin" && pwd -P)

# ---- 1. packages --------------------------------------------------------------------------------
# Host side: QEMU and what builds the initramfs. Guest side (the guest runs the host's root
# filesystem): the tools the guest tests call.
host_pkgs=(qemu-system-x86 busybox-static cpio kmod)
guest_pkgs=(udev systemd dbus python3 v4l-utils libjpeg-turbo-progs
  iio-sensor-proxy util-linux procps dosfstools
  sway wlr-randr seatd jq) # rotate-touch, rotate-wlr (they skip without them)

missing_pkgs() {
  local p
  for p in "$@"; do
    dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q 'install ok installed' || echo "$p"
  done
}

apt_lists_present() { compgen -G '/var/lib/apt/lists/*_Packages*' >/dev/null; }

# rotate-x11: a real Xorg (modesetting on the virtio-gpu card) with the libinput input driver.
guest_pkgs+=(xserver-xorg-core xserver-xorg-input-libinput x11-xserver-utils xinput)
# The systemd stage's client tests (guest/systemd-tests/2x-, 3x-; docs/clients.md): the real
# programs that use net.hadess.SensorProxy, polkit's daemon, what they need to run headless, chvt.
guest_pkgs+=(polkitd python3-gi mutter gnome-settings-daemon gnome-session-bin upower
  xserver-xorg-video-dummy geoclue-2.0 geoclue-2-demo python3-pyqt5.qtsensors phosh phoc kbd)

mapfile -t missing < <(missing_pkgs "${host_pkgs[@]}" "${guest_pkgs[@]}")
if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" -eq 0 ]; then
    say "installing ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt_lists_present || apt-get -o DPkg::Lock::Timeout=600 update -qq
    apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends "${missing[@]}" >/dev/null ||
      { apt-get -o DPkg::Lock::Timeout=600 update -qq && apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends "${missing[@]}"; } ||
      say "could not install ${missing[*]}"
  else
    say "missing packages ${missing[*]}; as root: apt-get install ${missing[*]}"
  fi
fi

# Skip (77) only when QEMU cannot run at all; CI turns that into a failure.
cannot_run_qemu() {
  local why=$1 verdict=SKIPPED
  $ci && verdict="FAILED (CI=true: the VM stage must run)"
  printf '\n'
  printf '%s\n' '****************************************************************************'
  printf '*  VM TESTS %s\n' "$verdict"
  printf '*  QEMU cannot run here: %s\n' "$why"
  printf '%s\n' '*  The guest tests against real kernel drivers did NOT run.'
  printf '%s\n' '****************************************************************************'
  if $ci; then exit 1; fi
  exit 77
}
qemu_bin=${ORIENTD_VM_QEMU:-qemu-system-x86_64}
command -v "$qemu_bin" >/dev/null || cannot_run_qemu "$qemu_bin is not installed"
if ! probe=$(echo quit | timeout 30 "$qemu_bin" -machine none -accel tcg -display none \
  -nodefaults -monitor stdio 2>&1); then
  cannot_run_qemu "$qemu_bin with TCG does not start: $(echo "$probe" | tail -1)"
fi
mapfile -t missing < <(missing_pkgs "${host_pkgs[@]}")
[ ${#missing[@]} -eq 0 ] || die "missing ${missing[*]}; install them (scripts/deps.sh) and rerun"

# ---- 2. the kernel ------------------------------------------------------------------------------
# Resolve the image package linux-image-amd64 depends on right now, and its candidate version.
resolve_kernel() {
  kpkg=$(apt-cache depends linux-image-amd64 2>/dev/null |
    awk '$1 ~ /Depends:$/ && $2 ~ /^linux-image-/ { print $2; exit }')
  [ -n "$kpkg" ] || return 1
  kver=$(apt-cache policy "$kpkg" 2>/dev/null | awk '$1 == "Candidate:" { print $2; exit }')
  [ -n "$kver" ] && [ "$kver" != "(none)" ]
}
if ! resolve_kernel; then
  if [ "$(id -u)" -eq 0 ]; then
    say "apt has no package lists with linux-image-amd64; running apt-get update"
    apt-get -o DPkg::Lock::Timeout=600 update -qq || true
  fi
  resolve_kernel || die "apt-cache cannot resolve linux-image-amd64 (no package lists?); run apt-get update as root"
fi

mkdir -p "$cache" || die "cannot create the cache $cache (set ORIENTD_VM_CACHE)"
# Runs may share the cache (two checkouts, a developer's run beside CI's): one prepares it at a
# time (kernel, modules, initramfs, hwdb); the VMs themselves then run side by side.
exec {cache_lock}>"$cache/.lock"
flock "$cache_lock" || die "cannot lock $cache/.lock"
kdir=$cache/kernel/${kpkg}_${kver}
if [ -f "$kdir/.complete" ]; then
  say "kernel: $kpkg $kver (cached in $kdir)"
else
  t0=$(date +%s.%N)
  say "kernel: downloading $kpkg $kver"
  dl=$cache/download
  rm -rf "$dl" "$kdir.partial"
  mkdir -p "$dl" "$kdir.partial"
  (cd "$dl" && apt-get download -q -o APT::Sandbox::User=root "$kpkg=$kver" >/dev/null) ||
    die "apt-get download $kpkg=$kver failed (network? apt sources?)"
  dpkg-deb -x "$dl"/*.deb "$kdir.partial" || die "dpkg-deb -x of $(ls "$dl") failed"
  rm -rf "$dl"
  # Older kernels are not needed any more: keep the cache to one version.
  find "$cache/kernel" -mindepth 1 -maxdepth 1 ! -name "${kdir##*/}.partial" -exec rm -rf {} +
  mv "$kdir.partial" "$kdir"
  touch "$kdir/.complete"
  say "kernel: extracted in $(elapsed "$t0")s"
fi
# The kernel version comes from the package's contents, never from a pin.
kv=$(find "$kdir/lib/modules" -mindepth 1 -maxdepth 1 -printf '%f\n' | head -1)
vmlinuz=$kdir/boot/vmlinuz-$kv
[ -n "$kv" ] && [ -f "$vmlinuz" ] || die "$kpkg in $kdir has no /lib/modules/<version> or vmlinuz"
[ -f "$kdir/lib/modules/$kv/modules.dep.bin" ] || depmod -b "$kdir" "$kv" ||
  die "depmod -b $kdir $kv failed"

# ---- 2b. modules Debian's kernel does not build -------------------------------------------------
# What the selected tests ask for ("# kmods: NAME..." in their header; rows of vm/kmods.table),
# built out of tree by vm/kmods.sh into the kernel tree above (updates/orientd-vm), once per
# kernel package: with a warm cache this costs a few file reads.
mapfile -t kmods < <(for t in "${selected[@]}"; do
  sed -n 's/^# kmods: *//p' "$tests_dir"/[0-9][0-9]-"$t".sh
done | tr ' ' '\n' | awk 'NF && !seen[$0]++')
if [ ${#kmods[@]} -gt 0 ]; then
  "$vmdir/kmods.sh" "$kdir" "$kv" "$kver" "${kmods[@]}" ||
    die "could not build ${kmods[*]} for $kv (vm/kmods.sh; the tests that ask for them would fail)"
fi

# ---- 3. the initramfs ---------------------------------------------------------------------------
# busybox, the modules that reach the 9p shares (virtio-pci, 9pnet_virtio, 9p with their
# dependencies, in the order modprobe would load them) and vm/initramfs/init as PID 1.
boot_modules() {
  local m
  # overlay: the writable root of the systemd guest (--systemd).
  for m in virtio_pci 9pnet_virtio 9p overlay; do
    modprobe -d "$kdir" -S "$kv" --show-depends "$m" | awk '$1 == "insmod" { print $2 }'
  done | awk '!seen[$0]++'
}
initrd_key=$(
  {
    cat "$vmdir/initramfs/init"
    boot_modules
    sha256sum /bin/busybox
  } | sha256sum | cut -c1-16
)
initrd=$cache/initramfs-$kv-$initrd_key.cpio.gz
if [ ! -f "$initrd" ]; then
  [ -x /bin/busybox ] || die "/bin/busybox (busybox-static) is not installed"
  src=$(mktemp -d)
  trap 'rm -rf "$src"' EXIT
  mkdir -p "$src"/{bin,dev,proc,sys,newroot,modules}
  cp /bin/busybox "$src/bin/busybox"
  boot_modules | while read -r ko; do
    cp "$ko" "$src/modules/"
    echo "${ko##*/}" >>"$src/modules/order"
  done
  cp "$vmdir/initramfs/init" "$src/init"
  chmod 755 "$src/init"
  rm -f "$cache"/initramfs-*.cpio.gz
  # A partial file of this run's own: two runs building at once (helpers sharing the cache)
  # wrote into one "$initrd.partial" and left a broken archive ("Initramfs unpacking failed").
  (cd "$src" && find . | cpio -o -H newc --quiet | gzip -1 >"$initrd.partial.$$")
  mv "$initrd.partial.$$" "$initrd"
  rm -rf "$src"
  trap - EXIT
  say "initramfs: built $initrd ($(du -k "$initrd" | cut -f1) KiB)"
fi

# ---- 3b. the guest's hwdb -----------------------------------------------------------------------
# The host's hwdb sources plus the test entry (vm/guest/fixtures/61-orientd-vm.hwdb), compiled
# here by systemd-hwdb (0.6 s natively, several seconds under TCG) and shared read-only; the guest
# puts it at /etc/udev/hwdb.bin, where udev looks before the distribution's own.
data=$cache/guest-data
hwdb_sources() {
  ls -d /usr/lib/udev/hwdb.d/*.hwdb /etc/udev/hwdb.d/*.hwdb "$vmdir/guest/fixtures/"*.hwdb 2>/dev/null ||
    true
}
hwdb_key=$(hwdb_sources | xargs cat | sha256sum | cut -c1-16)
if [ "$(cat "$data/hwdb.key" 2>/dev/null)" != "$hwdb_key" ]; then
  command -v systemd-hwdb >/dev/null || die "systemd-hwdb (package udev) is not installed"
  hroot=$(mktemp -d)
  mkdir -p "$hroot/lib/udev/hwdb.d" "$hroot/usr/lib/udev/hwdb.d" "$hroot/etc/udev/hwdb.d" "$data"
  # Debian's systemd-hwdb reads <root>/lib/udev/hwdb.d; other builds <root>/usr/lib/udev/hwdb.d.
  cp /usr/lib/udev/hwdb.d/*.hwdb "$hroot/lib/udev/hwdb.d/"
  cp /usr/lib/udev/hwdb.d/*.hwdb "$hroot/usr/lib/udev/hwdb.d/"
  cp /etc/udev/hwdb.d/*.hwdb "$vmdir/guest/fixtures/"*.hwdb "$hroot/etc/udev/hwdb.d/" 2>/dev/null || true
  systemd-hwdb update --root="$hroot" || die "systemd-hwdb update failed"
  cp "$hroot/etc/udev/hwdb.bin" "$data/hwdb.bin"
  echo "$hwdb_key" >"$data/hwdb.key"
  rm -rf "$hroot"
  say "hwdb: compiled $(du -k "$data/hwdb.bin" | cut -f1) KiB with the test entry"
fi

flock -u "$cache_lock"
exec {cache_lock}>&-

# ---- 3c. the guest's Python modules ---------------------------------------------------------------
# The guest sees the project read-only, so Python would compile the emulators' modules (vm/guest/emu)
# at every start under TCG; compiled here once (the guest runs this same python3).
python3 -m compileall -q "$vmdir/guest/emu" >/dev/null 2>&1 ||
  say "could not compile vm/guest/emu (the guest compiles it at each start)"

# ---- 4. boot ------------------------------------------------------------------------------------
rm -rf "$out"
mkdir -p "$out"
out=$(cd "$out" && pwd -P)
{
  echo "VM_KERNEL_VERSION=$kv"
  echo "VM_KERNEL_PACKAGE='$kpkg $kver'"
  echo "VM_TESTS='${selected[*]}'"
  echo "VM_MODE=$mode"
  echo "VM_CI=$ci"
  echo "VM_HOST_PROJECT='$root'"
  echo "VM_HAVE_BIN=$([ -d "$bin" ] && echo 1 || echo 0)"
  echo "VM_INIT=$init"
  echo "VM_TESTS_DIR=${tests_dir#"$vmdir"/guest/}"
  # The benchmarks' knobs (vm/guest/tests/90-latency-bench.sh, 64-orientcam-libcamera.sh,
  # 59-orientd-motion.sh), when given.
  for knob in VM_BENCH_ROUNDS VM_BENCH_IDLE VM_BENCH_STILL VM_BENCH_PHOTOS VM_BENCH_ONESHOTS \
    VM_BENCH_SIZE VM_BENCH_SECONDS; do
    if [ -n "${!knob:-}" ]; then echo "$knob=${!knob}"; fi
  done
  if [ $init = systemd ]; then echo "VM_DEBS='/run/vm/project/${debs#"$(cd "$root" && pwd -P)"/}'"; fi
} >"$out/vm.env"

shares=(
  -virtfs "local,path=/,mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap,id=hostroot"
  -virtfs "local,path=$root,mount_tag=project,security_model=none,readonly=on,multidevs=remap,id=project"
  -virtfs "local,path=$kdir,mount_tag=kernel,security_model=none,readonly=on,id=kernel"
  -virtfs "local,path=$data,mount_tag=data,security_model=none,readonly=on,id=data"
  -virtfs "local,path=$out,mount_tag=out,security_model=none,id=out"
)
[ -d "$bin" ] && shares+=(-virtfs "local,path=$bin,mount_tag=bin,security_model=none,readonly=on,id=bin")

# No PS/2 keyboard and mouse (QEMU's PC has them even with -nodefaults): the emulated uinput
# keyboard is then the only device with volume keys, as on a tablet.
kernel_args="i8042.nokbd i8042.noaux"
# no_timer_check: on a busy host, TCG can miss the kernel's IO-APIC timer check at boot, which
# then panics ("IO-APIC + timer doesn't work"); the check is meaningless for a virtual timer.
kernel_args+=" no_timer_check"
# hpet=disable: the CMOS RTC then raises its own alarm interrupt (IRQ 8), which orientd-vm-sleep
# (vm/kmod/) arms to wake the guest from s2idle, as a laptop's chipset turns the alarm into a
# wake event; with HPET, rtc-cmos emulates that interrupt with 64 Hz HPET ticks on IRQ 8, which
# would wake it at once. The clock source is then acpi_pm (QEMU's TSC is marked unstable).
kernel_args+=" hpet=disable"
# systemd as PID 1 (--systemd): only what the tests need (guest/systemd/orientd-vm.target: basic
# system, journald, udevd, the system bus, then the test runner), no status lines on the console.
[ $init = bash ] || kernel_args+=" systemd.unit=orientd-vm.target systemd.show_status=false"
# A display for the rotate-panel test: a virtio-gpu device (its driver loads only when that test
# asks for it, so the other tests and the boot do not pay for it) whose connector Virtual-1 the
# kernel gives a DRM "panel orientation" property from the command line, as firmware quirks do
# for a portrait panel in a landscape tablet.
display=()
if [ $init = bash ]; then
  display=(-device virtio-gpu-pci,max_outputs=2)
  kernel_args+=" video=Virtual-1:panel_orientation=left_side_up"
  # rotate-x11's second output: QEMU without a display reports only the first one connected.
  kernel_args+=" video=Virtual-2:e"
fi
# ORIENTD_VM_APPEND: more kernel arguments, for debugging (e.g. "loglevel=7 no_console_suspend").
kernel_args+=${ORIENTD_VM_APPEND:+ $ORIENTD_VM_APPEND}
qemu=(timeout --kill-after=10 "$vm_timeout" "$qemu_bin"
  -accel tcg,thread=multi,tb-size=256 -cpu max -m "$mem" -smp "$smp"
  -nographic -nodefaults -no-reboot -no-user-config
  -kernel "$vmlinuz" -initrd "$initrd"
  -append "console=ttyS0 panic=-1 quiet loglevel=4 mitigations=off $kernel_args orientd_vm.mode=$mode orientd_vm.init=$init"
  "${display[@]}" "${shares[@]}")

if [ "$mode" != tests ]; then
  say "booting $kv interactively (power off: exit the shell)"
  exec "${qemu[@]}" -serial mon:stdio
fi

say "booting $kv with ${#selected[@]} guest tests (TCG, $smp vCPUs, ${mem} MiB); logs in $out"
boot_started=$(date +%s.%N)
# The log exists before tail looks for it (tail -f gives up on a file that is not there yet).
: >"$out/console.log"
"${qemu[@]}" -serial stdio </dev/null >>"$out/console.log" 2>&1 &
qpid=$!
# QEMU's own CPU time (user + system, from /proc; qpid is timeout's, QEMU is its child): under
# TCG nearly all of the guest's work is QEMU's CPU time, so it says what a test costs whatever
# else the host runs, where wall time on a shared host does not (a quiet machine's wall time is
# about this CPU time divided by the vCPUs the guest keeps busy: mostly one).
clk_tck=$(getconf CLK_TCK)
qemu_cpu() {
  local pid stat
  QEMU_CPU=
  # (The children file ends without a newline: read fails at its end but fills pid.)
  read -r pid _ <"/proc/$qpid/task/$qpid/children" 2>/dev/null
  [ -n "$pid" ] || return 0
  read -r -a stat <"/proc/$pid/stat" 2>/dev/null || return 0
  QEMU_CPU=$(((stat[13] + stat[14]) * 100 / clk_tck))
}
cpu_log=$out/qemu-cpu.txt
printf '%-24s %9s %9s\n' "# script" cpu_s wall_s >"$cpu_log"
# cpu_mark NAME: the interval since the last mark was NAME's (cpu in centiseconds).
cpu_mark_name=boot cpu_mark_cs=0 cpu_mark_wall=$boot_started
cpu_mark() {
  qemu_cpu
  [ -n "$QEMU_CPU" ] || return 0
  printf '%-24s %6d.%02d %9s\n' "$cpu_mark_name" $(((QEMU_CPU - cpu_mark_cs) / 100)) \
    $(((QEMU_CPU - cpu_mark_cs) % 100)) "$(elapsed "$cpu_mark_wall")" >>"$cpu_log"
  cpu_mark_name=$1 cpu_mark_cs=$QEMU_CPU cpu_mark_wall=$(date +%s.%N)
}
# Show the guest's per-test lines as they come (the console also has kernel and init messages).
# SeaBIOS leaves terminal escapes and an unfinished line before the guest's first line. The
# guest's "VM START name" lines (main.sh) only mark where a test script begins, for the CPU log.
tail -n +1 --pid="$qpid" -f "$out/console.log" 2>/dev/null |
  sed -u -e 's/\r//g' -e 's/^.*\(VM TEST\|VM BENCH\|VM START\)/\1/' |
  grep --line-buffered -E '^(VM TEST|VM BENCH|VM START|  \| |vm-init: (error|warning))' |
  while IFS= read -r line; do
    case $line in
      "VM START "*) cpu_mark "${line#VM START }" ;;
      *) printf '%s\n' "$line" ;;
    esac
  done || true
qrc=0
wait "$qpid" || qrc=$?

# ---- 5. the verdict -----------------------------------------------------------------------------
failed=0
if [ "$qrc" -eq 124 ] || [ "$qrc" -eq 137 ]; then
  say "FAIL: the VM did not finish within ${vm_timeout}s (ORIENTD_VM_TIMEOUT); see $out/console.log"
  failed=1
elif [ "$qrc" -ne 0 ]; then
  say "FAIL: qemu exited with status $qrc; see $out/console.log"
  tail -n 5 "$out/console.log" | sed 's/^/  | /'
  failed=1
fi
results=$out/results.txt
for script in "${selected[@]}"; do
  for t in $(reported "$script"); do
    if ! grep -q "^$t " "$results" 2>/dev/null; then
      echo "VM TEST $t: FAIL (no result: the guest stopped before it ran)"
      failed=1
    fi
  done
done
grep -q ' FAIL ' "$results" 2>/dev/null && failed=1
# The guest already fails a product check it would skip under CI; this catches any other skip.
if $ci && grep -q ' SKIP ' "$results" 2>/dev/null; then
  say "FAIL: CI=true and guest tests were skipped"
  failed=1
fi
if [ ! -f "$out/exit-code" ]; then
  say "FAIL: the guest wrote no exit code; see $out/console.log"
  failed=1
elif [ "$(cat "$out/exit-code")" != 0 ]; then
  failed=1
fi
counts=$(awk '{ n[$2]++ } END { printf "%d passed, %d failed, %d skipped", n["PASS"], n["FAIL"], n["SKIP"] }' \
  "$results" 2>/dev/null || echo "no results")
cpu=$(awk '!/^#/ { s += $2 } END { if (NR > 1) printf ", QEMU CPU %.0fs", s }' "$cpu_log")
say "kernel $kv ($kpkg $kver); $counts; boot+tests $(elapsed "$boot_started")s$cpu, stage $(elapsed "$started")s"
say "QEMU CPU and wall time per test script: $cpu_log"
say "logs and artefacts: $out"
exit "$failed"
