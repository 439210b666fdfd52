# bash completion for orientcam(1): commands, options, orientation names, cameras, formats.
# Installed as /usr/share/bash-completion/completions/orientcam.

_orientcam() {
  local cur prev words cword
  _init_completion -s || return

  local orientations="normal left-up bottom-up right-up"
  local command=
  [ "$cword" -gt 1 ] && command=${words[1]}
  if [ "$cword" -eq 1 ]; then
    COMPREPLY=($(compgen -W "capture session layout list inspect --help --version" -- "$cur"))
    return
  fi

  case $prev in
    --source)
      if [[ $cur == libcamera:* ]]; then
        # libcamera's camera ids (they may hold spaces): from orientcam list, which starts
        # libcamera only now.
        local ids
        ids=$("${words[0]}" list --json 2>/dev/null | grep -o '"source":"libcamera:[^"]*"' |
          sed 's/^"source":"//; s/"$//')
        local IFS=$'\n'
        COMPREPLY=($(compgen -W "$ids" -- "$cur"))
        return
      fi
      local cameras
      cameras=$(compgen -G '/dev/video*' | sed 's/^/v4l2:/')
      COMPREPLY=($(compgen -W "v4l2 $cameras libcamera libcamera: pattern $(printf 'pattern:%s ' $orientations) file:" -- "$cur"))
      [[ ${#COMPREPLY[@]} -eq 1 && ${COMPREPLY[0]} == *: ]] && compopt -o nospace
      return
      ;;
    --orientation)
      if [ "$command" = layout ]; then
        COMPREPLY=($(compgen -W "$orientations" -- "$cur"))
      else
        COMPREPLY=($(compgen -W "auto $orientations" -- "$cur"))
      fi
      return
      ;;
    --orientation-fallback)
      COMPREPLY=($(compgen -W "$orientations" -- "$cur"))
      return
      ;;
    --orientation-from)
      _filedir
      COMPREPLY+=($(compgen -W "-" -- "$cur"))
      return
      ;;
    --format)
      COMPREPLY=($(compgen -W "mjpeg jpeg yuyv nv12 rgb24 bgr24" -- "$cur"))
      return
      ;;
    --rotate)
      COMPREPLY=($(compgen -W "both pixels exif none" -- "$cur"))
      return
      ;;
    --lossless)
      COMPREPLY=($(compgen -W "reencode trim strict" -- "$cur"))
      return
      ;;
    --sensor-rotation)
      COMPREPLY=($(compgen -W "0 90 180 270" -- "$cur"))
      return
      ;;
    --shutter-keys)
      COMPREPLY=($(compgen -W "volumeup volumedown camera" -- "$cur"))
      return
      ;;
    --shutter-device)
      COMPREPLY=($(compgen -G '/dev/input/event*' -- "$cur"))
      return
      ;;
    --overlay | --render | -o | --output)
      _filedir
      return
      ;;
    --resolution | --min-resolution | --preview-size | --size | --skip | --count | --quality | \
      --burst | --fps)
      return
      ;;
  esac
  $split && return

  local capture="--source --resolution --format --skip --count --min-resolution --orientation
    --orientation-from --orientation-fallback --sensor-rotation --mirror --rotate --lossless
    --quality --output --force --json --verbose --help"
  local opts
  case $command in
    capture) opts=$capture ;;
    session)
      opts="$capture --shutter-keys --shutter-device --burst --headless --overlay --preview-size
        --fullscreen --fps"
      ;;
    layout) opts="--size --orientation --overlay --json --render --upright --print-overlay --help" ;;
    list) opts="--json --help" ;;
    inspect)
      if [[ $cur != -* ]]; then
        _filedir '@(jpg|jpeg|JPG|JPEG)'
        return
      fi
      opts="--json --help"
      ;;
  esac
  COMPREPLY=($(compgen -W "$opts" -- "$cur"))
}
complete -F _orientcam orientcam
