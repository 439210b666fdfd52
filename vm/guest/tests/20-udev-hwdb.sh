#!/bin/bash
# udev: systemd-udevd runs in the guest with the host's rules, the project's udev/*.rules and a
# hwdb entry (fixtures/61-orientd-vm.hwdb) matched the way systemd's 60-sensor.rules looks IIO
# sensors up; udevadm shows the non-identity ACCEL_MOUNT_MATRIX on the emulated accelerometer.
# timeout: 90
# shellcheck source=vm/guest/lib.sh
. /run/vm/project/vm/guest/lib.sh

require "systemd-udevd runs with the test hwdb compiled in" udev_start
require "the emulated accelerometer appears" accel_start
require "udev has processed the new devices" udevadm settle --timeout=20
parent=$(cat "$IIO_DEV/../modalias")
log "IIO parent modalias: $parent"
log "machine DMI modalias: $(cat /sys/class/dmi/id/modalias)"
log "the hwdb key 60-sensor.rules builds: sensor:modalias:$parent:$(cat /sys/class/dmi/id/modalias)"
udevadm info -q property -p "$IIO_DEV" >"$TOUT/iio-properties.txt"
sed 's/^/  /' "$TOUT/iio-properties.txt"
matrix=$(sed -n 's/^ACCEL_MOUNT_MATRIX=//p' "$TOUT/iio-properties.txt")
check "udevadm info shows ACCEL_MOUNT_MATRIX=$HWDB_MATRIX on $IIO_NAME (got '$matrix')" \
  test "$matrix" = "$HWDB_MATRIX"
check "Debian's iio-sensor-proxy rules tag it iio-buffer-accel" \
  grep -q '^IIO_SENSOR_PROXY_TYPE=.*iio-buffer-accel' "$TOUT/iio-properties.txt"
check "udev created /dev/$IIO_NAME" test -c "/dev/$IIO_NAME"
accel unplug
check "udev sees the device go" wait_for 10 "$IIO_NAME to go" iio_gone
finish
