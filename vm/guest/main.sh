#!/bin/bash
# The guest test runner: runs each selected vm/guest/tests/NN-NAME.sh in its own bash with a time
# limit (a "# timeout: SECONDS" line in the test, default 90), its output in out/NAME/log.txt, and
# prints one "VM TEST NAME: PASS|FAIL|SKIP (seconds)" line per test on the console, which the host
# shows as it comes. A failing test's last log lines follow its result line. Exit status 1 when a
# test failed. Results also go to out/results.txt ("NAME STATUS SECONDS NOTE") for the host.
VM_TEST_OUT=/run/vm/out/runner
# shellcheck source=vm/guest/lib.sh
. /run/vm/project/vm/guest/lib.sh
trap - EXIT

results=$OUT/results.txt
: >"$results"
log "guest up: kernel $(uname -r), $(nproc) vCPUs, $(awk '/MemTotal/ { print int($2 / 1024) }' /proc/meminfo) MiB" \
  >"$OUT/runner/log.txt"

echo # the console's current line is the firmware's; results start on a line of their own
status=0
for name in $VM_TESTS; do
  # (Builtins only between two tests: every fork costs a fraction of a second under TCG.)
  files=("$GUEST"/"${VM_TESTS_DIR:-tests}"/[0-9][0-9]-"$name".sh)
  file=${files[0]}
  dir=$OUT/$name
  mkdir -p "$dir"
  # The header's "# timeout: SECONDS" and "# parts: A B C" lines (read without forking).
  limit= parts=
  while IFS= read -r line; do
    case $line in
      "# timeout:"*) [ -n "$limit" ] || limit=${line#"# timeout:"} ;;
      "# parts:"*) [ -n "$parts" ] || parts=${line#"# parts:"} ;;
      [!#]*) break ;;
    esac
  done <"$file"
  limit=${limit// /}
  limit=${limit:-90}
  # For the host's CPU log (vm/run.sh): where each test script begins.
  echo "VM START $name"
  now_cs
  t0=$NOW_CS
  log "start $name (limit ${limit}s)" >>"$OUT/runner/log.txt"
  VM_TEST=$name VM_TEST_OUT=$dir timeout -k 5 "$limit" bash "$file" >"$dir/log.txt" 2>&1 </dev/null
  rc=$?
  now_cs
  printf -v secs '%d.%d' $(((NOW_CS - t0) / 100)) $((((NOW_CS - t0) % 100) / 10))
  note=
  case $rc in
    0)
      result=PASS
      first_line "$dir/note"
      note=$FIRST_LINE
      ;;
    77)
      result=SKIP
      first_line "$dir/skip-reason"
      note=$FIRST_LINE
      ;;
    124 | 137)
      result=FAIL
      note="timed out after ${limit}s"
      ;;
    *)
      result=FAIL
      note=$(grep -m1 -o 'FAIL: .*' "$dir/log.txt" | cut -c7-)
      ;;
  esac
  # Whatever the test left running (it should have stopped it) does not leak into the next one.
  for f in "$VM/work/$name"/pids/*.pid; do
    first_line "$f" && kill -KILL "$FIRST_LINE" 2>/dev/null
  done
  log "end $name: exit $rc" >>"$OUT/runner/log.txt"
  # A script with "# parts: A B C" reports each part as its own test (see part in lib.sh).
  lines=()
  if [ -z "$parts" ]; then
    lines+=("$name $result $secs $note")
  else
    # Each part's first line in the test's parts file.
    declare -A part_line=()
    if [ -r "$dir/parts" ]; then
      while IFS= read -r entry; do
        [ -n "${part_line[${entry%% *}]+set}" ] || part_line[${entry%% *}]=$entry
      done <"$dir/parts"
    fi
    reached=1
    for part in $parts; do
      if [ -n "${part_line[$part]+set}" ]; then
        lines+=("${part_line[$part]}")
      elif [ "$result" = SKIP ]; then
        lines+=("$part SKIP 0.0 $note")
      elif [ $reached = 1 ] && [ "$result" = FAIL ]; then
        lines+=("$part FAIL $secs ${note:-ended early}")
        reached=0
      else
        lines+=("$part FAIL 0.0 not reached: an earlier part of $name failed")
      fi
    done
  fi
  failed_here=0
  for entry in "${lines[@]}"; do
    read -r part_name part_result part_secs part_note <<<"$entry"
    echo "$entry" >>"$results"
    line="VM TEST $part_name: $part_result (${part_secs}s)"
    [ -n "$part_note" ] && line="$line - $part_note"
    echo "$line"
    [ "$part_result" = FAIL ] && failed_here=1
  done
  # Benchmarks print their figures as "BENCH ..." lines; they go to the console too.
  while IFS= read -r entry; do
    [[ $entry == "BENCH "* ]] && echo "VM $entry"
  done <"$dir/log.txt"
  if [ $failed_here = 1 ]; then
    status=1
    tail -n 25 "$dir/log.txt" | sed 's/^/  | /'
  fi
done
echo "VM START shutdown"
sync
exit $status
