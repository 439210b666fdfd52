# Sourced (not run) by the scripts that start a private D-Bus system bus: demo.sh,
# bench/daemon.sh, bench/claims.sh, gen-link-order.sh. The configuration is
# Tests/Fixtures/dbus/private-system-bus.conf.in, which the tests (TestSupport.PrivateBus) and
# the VM guest use too: the system bus' default policy (nobody owns a name, method calls only
# where a policy allows them) with the project's dbus/ policy included.
#
#   private_bus_conf FILE SOCKET [EXTRA-XML]   writes FILE for a bus listening on SOCKET;
#                                              EXTRA-XML (limits, more includes) goes inside
private_bus_conf() {
  local file=$1 socket=$2 extra=${3:-}
  local root conf
  root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
  conf=$(<"$root/Tests/Fixtures/dbus/private-system-bus.conf.in")
  conf=${conf//@LISTEN@/"unix:path=$socket"}
  conf=${conf//@EXTRA@/"$extra
  <includedir>$root/dbus</includedir>"}
  printf '%s\n' "$conf" > "$file"
}
