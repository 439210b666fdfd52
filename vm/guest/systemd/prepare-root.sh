#!/bin/bash
# Run by vm/initramfs/init (chrooted into the overlay root) before it switches root to systemd
# (vm/run.sh --systemd). Everything written here lands in the overlay's tmpfs, never on the host.
set -euo pipefail
. /run/vm/out/vm.env
here=/run/vm/project/vm/guest/systemd

# The host's root is a Docker image: with /.dockerenv systemd believes it runs in a container
# (it then ignores the kernel command line, and udev does not start).
rm -f /.dockerenv /run/.containerenv
# Docker's policy-rc.d (exit 101) forbids every service start and stop from maintainer scripts;
# a real Debian system has none, and the tests check what the packages' scripts do.
rm -f /usr/sbin/policy-rc.d
# The test target and its runner.
cp "$here/orientd-vm.target" "$here/orientd-vm-tests.service" /etc/systemd/system/
# The client tests' login session (session.sh): getty@tty1 logs the test user in by itself once
# a test starts it (nothing else does: orientd-vm.target has no getty.target).
cp -r "$here/getty@tty1.service.d" /etc/systemd/system/

# Units of the host's installation that a test guest has no use for, or that would rewrite what
# the tests rely on: the compiled test hwdb (systemd-hwdb-update), timers firing at boot (apt,
# man-db), the network clock, the first-boot wizard, remounting a root that has no fstab entry.
for unit in timers.target systemd-hwdb-update.service ldconfig.service \
  systemd-journal-catalog-update.service systemd-update-done.service systemd-firstboot.service \
  systemd-remount-fs.service systemd-timesyncd.service systemd-pstore.service \
  systemd-repart.service systemd-binfmt.service proc-sys-fs-binfmt_misc.automount; do
  ln -sfn /dev/null "/etc/systemd/system/$unit"
done

# The kernel's modules where kmod looks (the host has none): udev and systemd load them.
mkdir -p /usr/lib/modules
ln -sfn "/run/vm/kernel/lib/modules/$VM_KERNEL_VERSION" "/usr/lib/modules/$VM_KERNEL_VERSION"
# The host's hwdb with the test entry (the emulated sensor's mount matrix), compiled by vm/run.sh;
# udev reads /etc/udev/hwdb.bin before /lib/udev/hwdb.bin.
ln -sfn /run/vm/data/hwdb.bin /etc/udev/hwdb.bin
echo orientd-vm >/etc/hostname
# The guest has no network, and what the packages depend on is installed: apt resolves the local
# .debs against dpkg's status alone, without parsing the host's package lists (tens of MB: two
# minutes under TCG on a busy host).
mkdir -p /var/lib/orientd-vm/apt-lists/partial
cat >/etc/apt/apt.conf.d/99orientd-vm <<'CONF'
Dir::Etc::SourceList "/dev/null";
Dir::Etc::SourceParts "/nonexistent";
Dir::State::Lists "/var/lib/orientd-vm/apt-lists";
CONF
# man-db's dpkg trigger rebuilds the whole manual database after every installation (minutes
# under TCG); without this flag file it skips that. The tests read the pages themselves.
rm -f /var/lib/man-db/auto-update
