# Sourced (not run) by the scripts that start a private D-Bus system bus: demo.sh,
# bench-daemon.sh, bench-claims.sh. Tests/TestSupport's PrivateBus writes the same
# configuration for the tests: the system bus' default policy (nobody owns a name, method calls
# only where a policy allows them) with the project's dbus/ policy included.
#
#   private_bus_conf FILE SOCKET [EXTRA-XML]   writes FILE for a bus listening on SOCKET;
#                                              EXTRA-XML (limits, more includes) goes inside
private_bus_conf() {
  local file=$1 socket=$2 extra=${3:-}
  local root
  root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
  cat > "$file" <<CONF
<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>system</type>
  <listen>unix:path=$socket</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow user="*"/>
    <deny own="*"/>
    <deny send_type="method_call"/>
    <allow send_type="signal"/>
    <allow send_requested_reply="true" send_type="method_return"/>
    <allow send_requested_reply="true" send_type="error"/>
    <allow receive_type="method_call"/>
    <allow receive_type="method_return"/>
    <allow receive_type="error"/>
    <allow receive_type="signal"/>
    <allow send_destination="org.freedesktop.DBus" send_interface="org.freedesktop.DBus"/>
    <allow send_destination="org.freedesktop.DBus"
           send_interface="org.freedesktop.DBus.Introspectable"/>
    <allow send_destination="org.freedesktop.DBus"
           send_interface="org.freedesktop.DBus.Properties"/>
    <allow send_destination="org.freedesktop.DBus" send_interface="org.freedesktop.DBus.Peer"/>
  </policy>
$extra
  <includedir>$root/dbus</includedir>
</busconfig>
CONF
}
