# bash completion for orientd(8): modes, options, detector and hinge parameter keys (replay --set),
# orientation names and rotate's option values, files. Installed as /usr/share/bash-completion/completions/orientd.

_orientd_detector_keys() {
  # The keys orientd --help lists under "detector parameters" and "hinge parameters".
  orientd --help 2>/dev/null |
    awk '/^(detector|hinge) parameters/ { on = 1; next } on && /^  [a-z]/ { print $1 } on && !/^  / { on = 0 }'
}

_orientd() {
  local cur prev words cword
  _init_completion -s || return

  local mode=daemon word
  for word in "${words[@]:1:cword-1}"; do
    case $word in
      --watch | --get | --list-sensors) mode=${word#--} ;;
      record | replay | rotate | calibrate) mode=$word ;;
    esac
  done

  case $prev in
    --config)
      _filedir conf
      return
      ;;
    --duration | --settle | --output | --touch | --exec | --exec-before | --hold | --timeout | \
      --face-timeout | --suggest-timeout)
      return
      ;;
    --sensor)
      # IIO device names, read from sysfs (cheap: --list-sensors samples the sensor).
      COMPREPLY=($(compgen -W "$(ls /sys/bus/iio/devices 2>/dev/null)" -- "$cur"))
      return
      ;;
    --hwdb-file)
      _filedir hwdb
      return
      ;;
    --write)
      # The kind is optional: an option may follow instead.
      if [[ $cur != -* ]]; then
        COMPREPLY=($(compgen -W "hwdb config" -- "$cur"))
        return
      fi
      ;;
    --face-camera)
      COMPREPLY=($(compgen -W "auto v4l2 $(printf 'v4l2:%s ' /dev/video* 2>/dev/null) file:" -- "$cur"))
      return
      ;;
    --face-program)
      _filedir
      return
      ;;
    --backend)
      COMPREPLY=($(compgen -W "auto sway wlr-randr x11 none" -- "$cur"))
      return
      ;;
    --when)
      COMPREPLY=($(compgen -W "always tablet" -- "$cur"))
      return
      ;;
    --natural)
      COMPREPLY=($(compgen -W "normal left-up bottom-up right-up" -- "$cur"))
      return
      ;;
    --set)
      local IFS=$'\n'
      compopt -o nospace
      COMPREPLY=($(compgen -S = -W "$(_orientd_detector_keys)" -- "$cur"))
      return
      ;;
  esac
  # --set=KEY... and --config=FILE were split at '=' by _init_completion -s.
  $split && return

  local opts
  case $mode in
    daemon)
      opts="--verbose --config --session --no-compat --watch --get --list-sensors --config-keys --help --version"
      if [ "$cword" -eq 1 ]; then
        opts+=" record replay rotate calibrate"
      fi
      ;;
    watch) opts="--json --session --verbose --light --proximity --compass --motion" ;;
    get) opts="--json --session --verbose" ;;
    list-sensors) opts="--json --config --verbose" ;;
    record) opts="--duration --raw --base --motion --config --verbose --help" ;;
    rotate)
      opts="--output --backend --touch --touch-only --when --exec --exec-before --natural --settle
        --once --force --json --session --suggest --suggest-timeout --verbose --lock --unlock
        --toggle-lock --lock-status --help"
      ;;
    calibrate)
      opts="--json --exact --write --revert --sensor --config --hold --timeout --hwdb-file --verbose --help"
      ;;
    replay)
      opts="--json --tilt --motion --config --set --face-camera --face-timeout --face-program --help"
      if [[ $cur != -* ]]; then
        _filedir '@(csv|txt)'
        COMPREPLY+=($(compgen -W "-" -- "$cur"))
        return
      fi
      ;;
  esac
  COMPREPLY=($(compgen -W "$opts" -- "$cur"))
}
complete -F _orientd orientd
