#!/bin/bash
# Product: `orientcam list --json` finds the vivid camera, with its driver and formats.
# timeout: 60
# shellcheck source=vm/guest/lib.sh
. /run/vm/project/vm/guest/lib.sh

need_product orientcam list -- --json
require "vivid creates $VIDEO" vivid_start
out=$("$BIN/orientcam" list --json 2>"$TOUT/list.err")
check "orientcam list --json exits 0" test $? -eq 0
echo "$out" >"$TOUT/list.json"
log "orientcam list --json: $(head -c 600 <<<"$out")"
check "it is JSON" "$PY" -c 'import json, sys; json.load(sys.stdin)' <<<"$out"
check "it lists $VIDEO" grep -q "$VIDEO" <<<"$out"
check "with the vivid driver" grep -q vivid <<<"$out"
check "and its YUYV format" grep -q YUYV <<<"$out"
finish
