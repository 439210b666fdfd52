#!/usr/bin/env bash
# The session part of the demo: one `orientcam session` of the test pattern that takes a photo
# in each orientation it is told about, and the overlay rendered for each orientation.
#
# Usage: scripts/demo/session.sh OUTDIR [--orientations O,O,...] [--watch PATH]
#                                       [--timeout SECONDS] [--preview]
#   --orientations  forced orientations, in order (default normal,left-up,bottom-up,right-up)
#   --watch PATH    follow `orientd --watch --json` lines from PATH instead: a FIFO (or
#                   anything streaming) is followed live and a photo is taken whenever the
#                   orientation changes to one not photographed yet, until all four are done,
#                   the input ends or --timeout passes (default 60 s); a regular file is
#                   replayed line by line
#   --preview       show the preview window (needs a display), otherwise --headless
# Environment: ORIENTCAM (a built orientcam; default: swift build --product orientcam).
# Writes OUTDIR/session-ORIENTATION-N.jpg (upright photos), OUTDIR/overlay-ORIENTATION.png
# (the overlay over the test frame as the display shows it), OUTDIR/session.jsonl (the
# session's events), and prints a summary.
set -euo pipefail
cd "$(dirname "$0")/../.."

out=${1:?usage: scripts/demo/session.sh OUTDIR [--orientations LIST] [--watch PATH]}
shift
orientations=normal,left-up,bottom-up,right-up
watch=""
timeout=60
display=--headless
while [ $# -gt 0 ]; do
  case "$1" in
    --orientations) orientations=$2; shift 2 ;;
    --watch) watch=$2; shift 2 ;;
    --timeout) timeout=$2; shift 2 ;;
    --preview) display=""; shift ;;
    *) echo "demo/session: unknown option $1" >&2; exit 64 ;;
  esac
done

if [ -z "${ORIENTCAM:-}" ]; then
  swift build --product orientcam >/dev/null
  ORIENTCAM="$(swift build --show-bin-path)/orientcam"
fi
mkdir -p "$out"
events="$out/session.jsonl"
: >"$events"
size=1280x720

# Forced orientations, or a regular file of watch lines: replay them through stdin, where the
# session also takes Enter (a photo) and q (end). One JSON line, then Enter, per orientation.
replay() {
  if [ -n "$watch" ]; then
    while IFS= read -r line; do
      case "$line" in *'"orientation"'*) printf '%s\n\n' "$line"; sleep 0.3 ;; esac
    done <"$watch"
  else
    IFS=, read -r -a list <<<"$orientations"
    for o in "${list[@]}"; do
      printf '{"orientation":"%s"}\n\n' "$o"
      sleep 0.3  # one at a time, so each photo's latency is its own
    done
  fi
  echo q
}

if [ -z "$watch" ] || [ -f "$watch" ]; then
  replay | "$ORIENTCAM" session --source pattern --orientation-from - $display --json \
    --preview-size 640x360 -o "$out/session-{orientation}-{n}.jpg" >"$events"
else
  # Live: follow the FIFO; photograph each new orientation as the session reports it.
  coproc SESSION {
    exec "$ORIENTCAM" session --source pattern --orientation-from "$watch" $display --json \
      --preview-size 640x360 -o "$out/session-{orientation}-{n}.jpg"
  }
  # Bash closes the coprocess's descriptors when it ends: read and write through duplicates,
  # so the last events can still be drained after it quit.
  exec {session_in}>&"${SESSION[1]}" {session_out}<&"${SESSION[0]}"
  session_pid=$SESSION_PID
  declare -A done=()
  end=$((SECONDS + timeout))
  while [ ${#done[@]} -lt 4 ] && [ $SECONDS -lt "$end" ]; do
    IFS= read -r -t 1 line <&"$session_out" || { kill -0 "$session_pid" 2>/dev/null && continue; break; }
    echo "$line" >>"$events"
    case "$line" in
      '{"event":"ready"'* | '{"event":"orientation"'*)
        o=$(sed -n 's/.*"orientation":"\([a-z-]*\)".*/\1/p' <<<"$line")
        if [ -n "$o" ] && [ -z "${done[$o]:-}" ]; then
          done[$o]=1
          echo >&"$session_in"  # Enter: a photo in this orientation
        fi
        ;;
    esac
  done
  echo q >&"$session_in" 2>/dev/null || true
  while IFS= read -r -t 10 line <&"$session_out"; do echo "$line" >>"$events"; done || true
  wait "$session_pid" || true
fi

echo "orientcam session: photos and overlays in $out"
printf '  %-11s  %-36s  %-22s  %s\n' orientation "photo (trigger to file)" "pattern in the photo" \
  "overlay render"
grep '"event":"photo"' "$events" | while IFS= read -r line; do
  o=$(sed -n 's/.*"orientation":"\([a-z-]*\)".*/\1/p' <<<"$line")
  path=$(sed -n 's/.*"path":"\([^"]*\)".*/\1/p' <<<"$line")
  ms=$(sed -n 's/.*"trigger_to_file_ms":\([0-9.]*\).*/\1/p' <<<"$line")
  "$ORIENTCAM" layout --size "$size" --orientation "$o" --render "$out/overlay-$o.png" >/dev/null
  seen=$("$ORIENTCAM" inspect "$path" | sed -n 's/.*, \(test pattern [a-z: 0-9]*\)$/\1/p')
  printf '  %-11s  %-36s  %-22s  %s\n' "$o" "$(basename "$path") (${ms} ms)" "$seen" \
    "overlay-$o.png"
done
count=$(grep -c '"event":"photo"' "$events" || true)
[ "$count" -gt 0 ] || { echo "demo/session: no photos taken" >&2; exit 1; }
