# bash completion for orientd-face(1): modes, options, orientations and camera names, pictures.
# Installed as /usr/share/bash-completion/completions/orientd-face.

_orientd_face() {
  local cur prev words cword split
  _init_completion -s || return

  local mode="" word
  for word in "${words[@]:1:cword-1}"; do
    case $word in
      detect | resolve) mode=$word ;;
    esac
  done

  case $prev in
    --current | --proposed)
      COMPREPLY=($(compgen -W "normal left-up bottom-up right-up" -- "$cur"))
      return
      ;;
    --camera)
      COMPREPLY=($(compgen -W "auto v4l2 $(printf 'v4l2:%s ' /dev/video* 2>/dev/null) file:" -- "$cur"))
      return
      ;;
    --sensor-rotation)
      COMPREPLY=($(compgen -W "auto 0 90 180 270" -- "$cur"))
      return
      ;;
    --timeout | --frames)
      return
      ;;
  esac
  $split && return

  case $mode in
    "") COMPREPLY=($(compgen -W "detect resolve --help --version" -- "$cur")) ;;
    detect)
      if [[ $cur == -* ]]; then
        COMPREPLY=($(compgen -W "--json --help" -- "$cur"))
      else
        _filedir '@(jpg|jpeg|JPG|JPEG|png|PNG|bmp|BMP)'
      fi
      ;;
    resolve)
      COMPREPLY=($(compgen -W "--camera --current --proposed --timeout --sensor-rotation --mirror
        --no-mirror --frames --verbose --help" -- "$cur"))
      ;;
  esac
} &&
  complete -F _orientd_face orientd-face
