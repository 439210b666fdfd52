#!/usr/bin/python3
"""A HID sensor hub for the test VM, made through /dev/uhid (stdlib only).

The kernel sees a HID device whose report descriptor holds one sensor collection per sensor on
the Sensors usage page. hid-sensor-hub binds to it and creates a platform device
HID-SENSOR-2000NN per collection, which the matching IIO driver turns into an IIO device with
raw, scale, offset and sampling_frequency attributes, scan elements, a trigger and
/dev/iio:deviceN. --kind picks the sensor of a one-sensor hub:
  accel  Accelerometer 3D (0x200073): hid-sensor-accel-3d, IIO name "accel_3d" (the default)
  als    Ambient Light (0x200041), field Illuminance: hid-sensor-als, IIO name "als"
         (in_illuminance_raw and in_intensity_both_raw, in tenths of lux: scale 0.1)
  prox   Proximity (0x200011), field Human Presence: hid-sensor-prox, IIO name "prox"
  magn   Compass 3D (0x200083), fields Magnetic Flux X/Y/Z and Compensated Magnetic North:
         hid-sensor-magn-3d, IIO name "magn_3d" (in_magn_{x,y,z}_raw in milligauss and
         in_rot_from_north_magnetic_tilt_comp_raw in degrees)
  hinge  Intel's custom hinge sensor as Intel's ISH firmware presents it: a Custom sensor
         collection (0x2000E1) whose Manufacturer property reads "INTEL" and whose Serial Number
         (the LUID) reads "LUID:020B000000000000", with Custom Value 1, 2 and 3 as input fields
         (hinge, screen and keyboard angle, in tenths of a degree: unit exponent -1, no unit).
         hid-sensor-custom binds to HID-SENSOR-2000e1, recognises the LUID and registers
         HID-SENSOR-INT-020b, which hid-sensor-custom-intel-hinge (built by vm/kmods.sh) turns
         into the IIO device "hinge": in_angl0_raw (hinge), in_angl1_raw (screen),
         in_angl2_raw (keyboard), labels hinge/screen/keyboard, in_angl_scale 0.001745329
         (radians per count)
--sensors NAME=KIND,... puts several sensors on one hub instead (each its own collection with
its own feature and input report IDs, as Intel's ISH hub presents all of a laptop's sensors),
e.g. --sensors lid=accel,base=accel,hinge=hinge for a convertible.

Behaves like a real sensor: it answers the driver's GET_REPORT/SET_REPORT requests for each
sensor's property (feature) report and for polled reads of its input report, and streams input
reports at the report interval the driver set, but only while the driver has the device open and
has switched that sensor to full power with event reporting on. So "no client claims" shows up
here as no input reports sent.

The change sensitivity in the feature report (HID Sensor Usages: the Data Field's Change
Sensitivity Absolute modifier, "the amount by which the field must change before the sensor
reports"; hid-sensor-accel-3d's in_accel_hysteresis, in the fields' unit and exponent) is honoured
as a hub does: with it above 0, an input report (periodic or on a change) is sent only when some
field differs from the last report sent by at least the sensitivity; the first report after the
sensor starts streaming is always sent. Reports held back are counted (suppressed).

System suspend: the emulator is a user process, so the kernel's freezer stops it for the whole
suspend; the drivers' suspend-time requests wait for it (uhid gives each 5 s) and it answers them
after the resume. It notices a suspend by the kernel's count of them
(/sys/power/suspend_stats/success). --resume-fault (or the command resume-fault) imitates hubs
that come back wrong, applied to each sensor the first time it is switched on after a resume:
  silent  it accepts the power-on but sends no input report (periodic, on change) until the
          driver writes its feature report again (a daemon that re-arms the sensor)
  forget  its report interval and change sensitivity are back to their power-on defaults
          (--interval-ms, 0): it streams at the default rate, unfiltered, and the driver's
          sampling_frequency and hysteresis attributes read the defaults back
  none    (the default) it keeps its settings and reports as before

Control: one command per line written to the --control FIFO. On a hub of several sensors a
sensor's command starts with its name ("lid vector 0 0 -9.8"); on a one-sensor hub the name may
be left out.
  vector X Y Z      (accel) the acceleration the sensor measures, in m/s^2, in the sensor's own frame
  orient NAME       (accel) gravity as seen by a device held in orientation NAME (normal, left-up,
                    bottom-up, right-up, face-up, face-down), in the display frame; turned into the
                    sensor's frame with the inverse of --mount-matrix, the matrix the system is
                    told (hwdb) the sensor is mounted with
  lux L             (als) the illuminance, in lux
  presence N        (prox) the Human Presence field: 0 nothing near, 1 (or a larger level) near
  heading DEG       (magn) the tilt-compensated heading from magnetic north, in whole degrees
  field X Y Z       (magn) the magnetic flux density on the three axes, in gauss
  angles H S K      (hinge) the hinge, screen and keyboard angles, in degrees
  fold DEG          a convertible folded to a hinge angle of DEG (0 closed, 90 laptop, 180 flat,
                    360 tablet) with its base flat on a table, for every sensor of the hub that
                    has a part in it: an accelerometer named "lid" reads (g sin a, 0, g cos a)
                    and one named "base" (0, 0, -g), in their own frames (as the orientd-posture
                    test folds them), a hinge sensor reads hinge DEG, screen DEG (the lid's angle
                    from the table, seen from the base), keyboard 0 (the base's); sensors
                    elsewhere (another hub) take their part from their own emulator's fold
  resume-fault MODE none, silent or forget (see above)
  unplug            destroy the HID device (UHID_DESTROY), as if the sensor hub went away
  plug [timestamps|plain]
                    create it again (with or without the Timestamp field in its input reports;
                    default: as before)
  quit              destroy the device and exit
State and counters are written to --status as KEY=VALUE lines after every change (atomically).
The hub's: present, opened, opens (how many times the driver opened the device: each power-up),
creates, commands (number of commands handled), timestamps, suspends (system suspends seen),
resume_fault. Each sensor's: streaming, power_state, reporting_state, interval_ms, sensitivity
(raw counts), reports_sent, suppressed, polled_reads, feature_gets, feature_sets, vector, raw (the
input fields' values, comma-separated), changed_at (guest CLOCK_MONOTONIC seconds of the last
physical change), faults (resume faults applied), silent (1 while a silent fault holds);
unprefixed on a one-sensor hub, as NAME.KEY on a hub of several.

With --timestamps (or "plug timestamps") the input reports also carry a 64-bit Timestamp field
(HID usage 0x200529, microseconds of the hub's clock, which follows the host's CLOCK_BOOTTIME as
Intel ISH hubs' does); hid-sensor-accel-3d then stamps the IIO scans with it (converted to
nanoseconds) instead of the clock current_timestamp_clock selects.
"""

import os
import sys

# The implementation is a module (compiled once by vm/run.sh); python3 -S still puts this
# script's folder first on sys.path.
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from hid_hub import main  # noqa: E402

if __name__ == '__main__':
    main(__doc__)
