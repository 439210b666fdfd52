#!/bin/bash
# apt-get purge orientd orientd-rotate orientcam, after every other test of the systemd guest has
# used the installed packages (10-packages.sh and the client tests): no file of the packages
# left, no orientd process, the unit unknown to systemd, no trace in dpkg. Run on its own, it
# installs the packages first (systemd/session.sh's packages_ready).
# timeout: 300
# shellcheck source=vm/guest/lib.sh
. /run/vm/project/vm/guest/lib.sh
# shellcheck source=vm/guest/systemd/session.sh
. "$GUEST/systemd/session.sh"

UNIT=orientd.service
require "the packages are installed" packages_ready
dpkg -L orientd orientd-rotate orientcam >"$TOUT/package-files.txt"
DEBIAN_FRONTEND=noninteractive apt-get purge -y orientd orientd-rotate orientcam \
  >"$TOUT/apt-purge.log" 2>&1
check "apt-get purge orientd orientd-rotate orientcam exits 0" test $? -eq 0
left=()
while IFS= read -r path; do
  # Directories other packages own too (/usr, /lib -> usr/lib, /lib/systemd/system, ...) stay;
  # files and links go.
  if [ ! -d "$path" ] && { [ -e "$path" ] || [ -L "$path" ]; }; then left+=("$path"); fi
done <"$TOUT/package-files.txt"
for dir in /usr/share/doc/orientd /usr/share/doc/orientcam; do [ -e "$dir" ] && left+=("$dir"); done
check "no file of the packages is left${left[*]:+: ${left[*]}}" test ${#left[@]} -eq 0
check "no orientd process runs" eval '! pgrep -x orientd >/dev/null'
check "systemd knows no orientd.service any more" \
  eval '[ "$(systemctl show -p LoadState --value "$UNIT")" = not-found ]'
status=$(dpkg-query -W -f='${Status}' orientd 2>/dev/null)
check "dpkg has no trace of it, not even configuration files (status: '$status')" \
  eval '[ -z "$status" ] || [[ $status == *" not-installed" ]]'
finish
