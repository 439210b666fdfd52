#!/bin/bash
# The person at the keyboard of the systemd test guest's login session (vm/run.sh --systemd).
# getty@tty1 logs the test user in on the first VT (the autologin drop-in next to this file);
# its ~/.bash_profile execs this script, which then runs whatever the tests ask for INSIDE that
# session: a process it starts belongs to the logind session (seat0, VT 1, local), so polkit's
# allow_active rules and a desktop's session checks see it exactly as they would see a program
# the user started on a real machine. The tests (as root, outside any session) talk to it
# through its folder (systemd/session.sh): they write JOB.sh and send JOB on the FIFO; this
# starts it in its own process group, output in JOB.out; the job itself writes JOB.pid first and
# JOB.rc when its command ends.
dir=/run/orientd-vm-session
# What the session gave its login shell (XDG_SESSION_ID, XDG_RUNTIME_DIR, XDG_SEAT, XDG_VTNR...).
env >"$dir/env.partial" && mv "$dir/env.partial" "$dir/env"
echo $$ >"$dir/agent-pid"
# Opened read-write: the FIFO never reports end-of-file between two jobs.
exec {jobs}<>"$dir/jobs"
while read -r -u "$jobs" job; do
  case $job in
    exit) exit 0 ;;
    *[!a-zA-Z0-9_-]* | '') continue ;;
  esac
  setsid bash "$dir/$job.sh" >"$dir/$job.out" 2>&1 </dev/null &
done
