#!/bin/bash
# orientd rotate on a real Xorg: the modesetting driver on the VM's virtio-gpu card (KMS output
# Virtual-1) and the libinput input driver on real evdev devices from uinput: a touchscreen
# (emu/uinput_touch.py), a pen tablet on the screen with pen and eraser tools (emu/uinput_pen.py)
# and a keyboard/mouse combo (emu/uinput_keyboard.py --mouse) that must be left alone. orientd on
# the emulated accelerometer; `orientd rotate --backend x11` WITHOUT --touch: the devices come
# from udev (ID_INPUT_TOUCHSCREEN / ID_INPUT_TABLET) and are matched to X devices by their
# "Device Node". After each of the four turns: the output's rotation from `xrandr` and the
# "Coordinate Transformation Matrix" of every X device of the touchscreen and the pen tablet from
# `xinput list-props`, against xrandr's own table (the Arch wiki's), not orientd's code.
# xf86-input-libinput makes an X device for a tablet tool when the tool first comes into
# proximity: the pen is brought in before orientd rotate starts, the eraser only after the first
# turn, and its fresh device must get the current matrix too.
# --natural normal: vm/run.sh gives Virtual-1 a left-side-up panel orientation for rotate-panel;
# this test is about X11, not about composing that in.
# timeout: 150
# shellcheck source=vm/guest/lib.sh
. /run/vm/project/vm/guest/lib.sh

need_product orientd rotate -- --backend x11
XORG=/usr/lib/xorg/Xorg
[ -x $XORG ] || skip "Xorg is not installed (xserver-xorg-core, scripts/deps.sh)"
[ -e /usr/lib/xorg/modules/input/libinput_drv.so ] ||
  skip "xf86-input-libinput is not installed (xserver-xorg-input-libinput, scripts/deps.sh)"
for tool in xrandr xinput; do
  command -v "$tool" >/dev/null || skip "$tool is not installed (scripts/deps.sh)"
done
require "virtio-gpu loads (the VM's display)" kmod virtio-gpu
require "its card appears" wait_for 30 "/dev/dri/card0" test -c /dev/dri/card0
require "uinput and evdev load" kmod -a uinput evdev
require "systemd-udevd runs" udev_start

# ---- the input devices --------------------------------------------------------------------------
TOUCH_STATUS=$RUNDIR/touch.status
spawn touch "${PY[@]}" "$GUEST/emu/uinput_touch.py" --status "$TOUCH_STATUS"
PEN_CTL=$RUNDIR/pen.control
PEN_STATUS=$RUNDIR/pen.status
mkfifo "$PEN_CTL"
spawn pen "${PY[@]}" "$GUEST/emu/uinput_pen.py" --control "$PEN_CTL" --status "$PEN_STATUS"
PEN_SENT=0
# pen COMMAND: "prox pen", "out eraser"...; waits until the emulator has sent it.
pen() {
  PEN_SENT=$((PEN_SENT + 1))
  echo "$*" >"$PEN_CTL"
  wait_for 10 "the pen to handle '$*'" pen_handled "$PEN_SENT"
}
pen_handled() { kv "$PEN_STATUS" commands && [ "$KV_VALUE" -ge "$1" ]; }
require "the keyboard/mouse appears" keyboard_start --mouse
require "the touchscreen appears" wait_for 20 "its event node" kv "$TOUCH_STATUS" node
require "the pen tablet appears" wait_for 20 "its event node" kv "$PEN_STATUS" node
require "udev has processed them" udevadm settle --timeout=20
kv "$PEN_STATUS" node
udevadm info -q property -n "$KV_VALUE" >"$TOUT/pen-udev.txt"
check "udev: the pen tablet is ID_INPUT_TABLET=1" has_line "$TOUT/pen-udev.txt" 'ID_INPUT_TABLET=1'

# ---- Xorg ---------------------------------------------------------------------------------------
# Root opens the card and the event nodes itself (no logind here); devices come from udev
# (AutoAddDevices, Debian's 40-libinput.conf picks the libinput driver); no VT switching: the
# guest's console is a serial line.
cat >"$RUNDIR/xorg.conf" <<'EOF'
Section "ServerFlags"
  Option "AutoAddGPU" "false"
  Option "DontVTSwitch" "true"
EndSection
Section "Device"
  Identifier "virtio-gpu"
  Driver "modesetting"
  Option "kmsdev" "/dev/dri/card0"
EndSection
EOF
spawn xorg $XORG :0 -config "$RUNDIR/xorg.conf" -logfile "$TOUT/Xorg.0.log" -nolisten tcp -noreset \
  -novtswitch -sharevts
export DISPLAY=:0
require "Xorg starts (modesetting on card0)" wait_for 60 "the X socket" test -S /tmp/.X11-unix/X0
require "Xorg answers" wait_for 30 "xrandr --query" eval 'xrandr --query >"$TOUT/xrandr-0.txt" 2>&1'
log "xrandr: $(head -3 "$TOUT/xrandr-0.txt")"
check "RandR lists Virtual-1, connected" has_line "$TOUT/xrandr-0.txt" 'Virtual-1 connected*'

# x_devices: X_IDS / X_NAMES / X_ROLES: every XInput device (xinput's order) from one xinput
# list; a role is "pointer" or "keyboard" (a master's too).
x_devices() {
  local line id name
  X_IDS=() X_NAMES=() X_ROLES=()
  xinput list --long >"$RUNDIR/xinput-list.txt" 2>&1 || return 1
  # "⎜   ↳ orientd-vm pen Pen (0)            	id=12	[slave  pointer  (2)]"
  while IFS= read -r line; do
    [[ $line =~ ^[^a-zA-Z]*([^$'\t']*[^[:space:]])[[:space:]]+id=([0-9]+) ]] || continue
    name=${BASH_REMATCH[1]} id=${BASH_REMATCH[2]}
    X_IDS+=("$id") X_NAMES+=("$name")
    # "[slave  keyboard (3)]", "[master pointer  (3)]", "[floating slave]" (a pointer)
    if [[ $line =~ \[(slave|master)\ +keyboard ]]; then X_ROLES+=(keyboard); else X_ROLES+=(pointer); fi
  done <"$RUNDIR/xinput-list.txt"
}
x_has_device() {
  local n
  x_devices || return 1
  for n in "${X_NAMES[@]}"; do [[ $n == $1 ]] && return 0; done
  return 1
}
require "Xorg's libinput has the touchscreen" wait_for 30 "an X device 'orientd-vm touchscreen'" \
  x_has_device 'orientd-vm touchscreen'
require "and the pen tablet" wait_for 30 "an X device 'orientd-vm pen*'" x_has_device 'orientd-vm pen*'
pen prox pen
pen out pen
require "the pen tool in proximity makes its X device" wait_for 30 "an X device '*Pen*'" \
  x_has_device 'orientd-vm pen*Pen*'
cp "$RUNDIR/xinput-list.txt" "$TOUT/xinput-before.txt"

# ---- the matrices -------------------------------------------------------------------------------
# xrandr's rotation word for each turn and the matrix that turns touch input with it, as the
# xinput/xrandr documentation tables write them (for an output that fills the screen).
declare -A RANDR=([normal]=normal [left-up]=left [bottom-up]=inverted [right-up]=right)
declare -A MATRIX=(
  [normal]="1 0 0 0 1 0 0 0 1"
  [left]="0 -1 1 1 0 0 0 0 1"
  [inverted]="-1 0 1 0 -1 1 0 0 1"
  [right]="0 1 0 -1 0 1 0 0 1")
# tidy VALUE...: TIDY is the values as "a b c ...": whole numbers without decimals, the others as
# xinput prints them (%f: 0.625000), no negative zero.
tidy() {
  local value out=()
  for value; do
    [[ $value == *.000000 ]] && value=${value%.000000}
    [ "$value" = -0 ] && value=0
    out+=("$value")
  done
  TIDY="${out[*]}"
}
# matrix_of ID: DEVICE_MATRIX is device ID's matrix ("none" without one).
matrix_of() {
  local line
  DEVICE_MATRIX=none
  xinput list-props "$1" >"$RUNDIR/props.txt" 2>&1 || return 1
  while IFS= read -r line; do
    [[ $line == *"Coordinate Transformation Matrix ("* ]] || continue
    line=${line#*:}
    # shellcheck disable=SC2086 # split into the nine values
    tidy ${line//,/ }
    DEVICE_MATRIX=$TIDY
  done <"$RUNDIR/props.txt"
}
# xrandr_rotation: X_ROTATION is Virtual-1's rotation word ("normal" when xrandr prints none),
# X_AREA its place "x y width height" and X_SCREEN the screen's "width height".
xrandr_rotation() {
  local words geometry
  X_ROTATION=
  xrandr --query >"$RUNDIR/xrandr.txt" 2>&1 || return 1
  last_line_with "$RUNDIR/xrandr.txt" 'Virtual-1 connected' || return 1
  read -ra words <<<"${LAST_LINE#Virtual-1 connected }"
  [ "${words[0]}" = primary ] && words=("${words[@]:1}")
  geometry=${words[0]} # WxH+X+Y
  [[ $geometry =~ ^([0-9]+)x([0-9]+)\+([0-9]+)\+([0-9]+)$ ]] || return 1
  X_AREA="${BASH_REMATCH[3]} ${BASH_REMATCH[4]} ${BASH_REMATCH[1]} ${BASH_REMATCH[2]}"
  X_ROTATION=${words[1]}
  [[ $X_ROTATION == "("* ]] && X_ROTATION=normal
  last_line_with "$RUNDIR/xrandr.txt" 'Screen 0:' || return 1
  [[ $LAST_LINE =~ current\ ([0-9]+)\ x\ ([0-9]+) ]] || return 1
  X_SCREEN="${BASH_REMATCH[1]} ${BASH_REMATCH[2]}"
}
# expected WORD: EXPECTED is the matrix for Virtual-1 turned WORD at X_AREA of X_SCREEN: the
# table's turn, then scaled and moved onto the output's part of the screen (the libinput/xinput
# wiki's recipe: [w/W 0 x/W; 0 h/H y/H; 0 0 1] times the turn).
expected() {
  # shellcheck disable=SC2046 # the nine values
  tidy $(awk -v r="${MATRIX[$1]}" -v a="$X_AREA" -v s="$X_SCREEN" 'BEGIN {
    split(r, m, " "); split(a, p, " "); split(s, q, " ")
    t[1] = p[3] / q[1]; t[2] = 0; t[3] = p[1] / q[1]
    t[4] = 0; t[5] = p[4] / q[2]; t[6] = p[2] / q[2]; t[7] = 0; t[8] = 0; t[9] = 1
    for (i = 0; i < 3; i++) for (j = 0; j < 3; j++) {
      v = 0
      for (k = 0; k < 3; k++) v += t[i * 3 + k + 1] * m[k * 3 + j + 1]
      printf "%f ", v
    }
  }')
  EXPECTED=$TIDY
}
# devices_mapped WORD: every X pointer device of the touchscreen and the pen tablet has the
# matrix for WORD (expected, from the last xrandr_rotation), the keyboard/mouse identity; each
# one logged. Slave keyboards carry no pointer motion: xf86-input-libinput attaches the pen
# tablet's base device "orientd-vm pen" to the core keyboard (its tools' devices are the
# pointers) and X refuses it a matrix (BadMatch).
devices_mapped() {
  local i want ok=0
  xrandr_rotation || return 1
  expected "$1"
  x_devices || return 1
  for i in "${!X_IDS[@]}"; do
    [ "${X_ROLES[$i]}" = pointer ] || continue
    case ${X_NAMES[$i]} in
      'orientd-vm touchscreen'* | 'orientd-vm pen'*) want=$EXPECTED ;;
      'orientd-vm keyboard'*) want=${MATRIX[normal]} ;;
      *) continue ;;
    esac
    matrix_of "${X_IDS[$i]}"
    if [ "$DEVICE_MATRIX" = "$want" ]; then
      log "  ${X_NAMES[$i]} (id ${X_IDS[$i]}): $DEVICE_MATRIX"
    else
      log "  ${X_NAMES[$i]} (id ${X_IDS[$i]}): $DEVICE_MATRIX, not $want"
      ok=1
    fi
  done
  return $ok
}

orientd_stack
require "orientd found the accelerometer" wait_for 20 "HasAccelerometer true" orientd_has_accel
spawn rotate env "DISPLAY=$DISPLAY" "XDG_RUNTIME_DIR=$RUNDIR" "XDG_STATE_HOME=$RUNDIR/state" \
  "$BIN/orientd" rotate -v --json --backend x11 --output Virtual-1 --natural normal --settle 0
# rotate_reports ORIENTATION N: rotate's Nth report (JSON line) is ORIENTATION.
rotate_reports() {
  local line n=0
  while IFS= read -r line; do
    [[ $line == "{"*'"orientation":'* ]] || continue
    n=$((n + 1))
    [ $n -eq "$2" ] && [[ $line == *"\"orientation\":\"$1\""* ]] && return 0
  done <"$TOUT/rotate.log"
  return 1
}
TURNS=0
require "orientd rotate started" wait_for 60 "rotate's start line" \
  last_line_with "$TOUT/rotate.log" 'touch: '
# (udev's order)
require "it found the touchscreen and the pen tablet through udev" \
  eval '[[ $LAST_LINE == *"orientd-vm touchscreen (touchscreen)"* &&
    $LAST_LINE == *"orientd-vm pen (tablet)"* ]]'
for orientation in left-up bottom-up right-up normal; do
  accel orient "$orientation"
  word=${RANDR[$orientation]}
  TURNS=$((TURNS + 1))
  check "orientd rotate turned to $orientation" \
    wait_for 60 "rotate's $orientation line" rotate_reports "$orientation" $TURNS
  check "xrandr: Virtual-1 is $word" wait_for 10 "rotation $word" \
    eval 'xrandr_rotation && [ "$X_ROTATION" = '"$word"' ]'
  check "xinput: touchscreen, pen (and eraser) matrices for $word; keyboard/mouse identity" \
    devices_mapped "$word"
  if [ "$orientation" = left-up ]; then
    # The eraser's X device is made now, after the turn.
    pen prox eraser
    pen out eraser
    check "the eraser in proximity makes its X device" wait_for 30 "an X device '*Eraser*'" \
      x_has_device 'orientd-vm pen*Eraser*'
    check "xinput: the eraser made after the turn has the current matrix ($word)" \
      wait_for 10 "the eraser's matrix" devices_mapped "$word"
  fi
done
cp "$RUNDIR/xinput-list.txt" "$TOUT/xinput-after.txt"

# ---- two outputs --------------------------------------------------------------------------------
# vm/run.sh gives the card a second output (max_outputs=2; video=Virtual-2:e forces it connected:
# QEMU reports only the first one without a display). Virtual-2 right of Virtual-1 makes the
# screen wider than Virtual-1: each matrix must map the devices onto Virtual-1's part only.
log "two outputs: $(xrandr --output Virtual-2 --auto --right-of Virtual-1 2>&1 && echo "Virtual-2 on")"
xrandr --query >"$TOUT/xrandr-2.txt" 2>&1
check "RandR lists Virtual-2, on, right of Virtual-1" has_line "$TOUT/xrandr-2.txt" \
  'Virtual-2 connected [0-9]*x[0-9]*+[1-9]*+0 *'
for orientation in left-up normal; do
  accel orient "$orientation"
  word=${RANDR[$orientation]}
  TURNS=$((TURNS + 1))
  check "two outputs: orientd rotate turned to $orientation" \
    wait_for 60 "rotate's $orientation line" rotate_reports "$orientation" $TURNS
  check "two outputs: xrandr: Virtual-1 is $word" wait_for 10 "rotation $word" \
    eval 'xrandr_rotation && [ "$X_ROTATION" = '"$word"' ]'
  log "Virtual-1 at $X_AREA of a $X_SCREEN screen"
  check "two outputs: xinput: the matrices map onto Virtual-1's part ($word)" devices_mapped "$word"
done
finish
