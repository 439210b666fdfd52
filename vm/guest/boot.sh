#!/bin/bash
# PID 1 of the test VM once the initramfs has switched root to the host's (read-only) root
# filesystem. Runs the guest test runner (or a shell), leaves the exit code in the results share
# and powers the VM off. If this script dies, the kernel panics and QEMU exits (-no-reboot,
# panic=-1): the host then finds no exit code and fails the run.
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export HOME=/root LANG=C.UTF-8 TERM=${TERM:-linux}
unset PYTHONPATH PYTHONHOME

out=/run/vm/out
# Writable places some tools expect, the host's own copies being read-only.
mount -t tmpfs -o mode=1777 vartmp /var/tmp
hostname orientd-vm
echo 1 >/proc/sys/kernel/sysrq

shell() {
  echo "orientd-vm: guest shell on $(uname -r); the tests are in /run/vm/project/vm/guest," \
    "results in /run/vm/out; 'exit' powers off"
  setsid --ctty bash -il </dev/ttyS0 >/dev/ttyS0 2>&1
}

mode=$(sed -n 's/.*orientd_vm\.mode=\([a-z]*\).*/\1/p' /proc/cmdline)
rc=0
case $mode in
  shell) shell ;;
  *)
    bash /run/vm/project/vm/guest/main.sh
    rc=$?
    echo "$rc" >"$out/exit-code"
    [ "$mode" = keep ] && shell
    ;;
esac
sync
echo o >/proc/sysrq-trigger
sleep 30
