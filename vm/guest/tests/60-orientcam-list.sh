#!/bin/bash
# Product: `orientcam list --json` finds the vivid camera (the only one in the guest), with its
# driver and formats: YUYV usable, 640x480 among its sizes.
# timeout: 60
# shellcheck source=vm/guest/lib.sh
. /run/vm/project/vm/guest/lib.sh

need_product orientcam list -- --json
require "vivid creates $VIDEO" vivid_start
"$BIN/orientcam" list --json >"$TOUT/list.json" 2>"$TOUT/list.err"
check "orientcam list --json exits 0" test $? -eq 0
log "orientcam list --json: $(head -c 600 "$TOUT/list.json")"
require "its output is JSON" json_fields "$TOUT/list.json" 0.device 0.driver 0.formats.0.fourcc \
  0.formats.0.usable 0.formats.0.sizes 1.device
log "read: $(tr '\n' ' ' <"$RUNDIR/fields")"
check "it lists $VIDEO" field_is 0.device "$VIDEO"
check "  with the vivid driver" field_is 0.driver vivid
check "  YUYV first among its formats" field_is 0.formats.0.fourcc YUYV
check "  usable" field_is 0.formats.0.usable true
check "  at 640x480 among other sizes" eval 'field 0.formats.0.sizes; [[ $FIELD == *\"640x480\"* ]]'
check "and no other camera" field_is 1.device '<missing>'
finish
