#!/usr/bin/env bash
# apply-edits.sh EDITS DIR — applies the edit list EDITS (edits.txt) to the files under DIR.
#
# The list is read top to bottom. `file: NAME` names the file (relative to DIR) that the edits
# after it change; `why: TEXT` gives the reason of the edits after it (required: an edit without
# a reason is refused); `#` starts a comment line. The edits:
#
#   drop-case: SUITE.NAME     removes the gtest case TEST/TEST_F(SUITE, NAME) through the end
#                             of its body (braces counted)
#   drop-lines: ERE           removes every line that matches the extended regular expression
#   drop-range: START => END  removes from the first line matching START through the first
#                             line matching END after it (both EREs)
#   sub: FROM => TO           replaces every occurrence of the literal text FROM with TO
#
# Every edit must change something, or the script stops and names it: the list describes one
# version of the sources exactly. Only a file under examples/ may be absent (an unpacked 0.10.2
# release has helloworld alone); its edits are then left out. It prints one line per edit (file, edit, lines changed, why)
# and writes DIR/.removed-cases (FILE SUITE.NAME per line) for the count of compiled cases.
set -euo pipefail
edits=$1
dir=$2
file="" why="" n=0 failed=0 absent=0
: >"$dir/.removed-cases"

apply() { # apply ACTION ARG1 ARG2 -> prints the number of lines changed
  local action=$1 target="$dir/$file"
  ACTION=$action ARG1=$2 ARG2=${3-} OUT="$target.edited" awk '
    BEGIN { action = ENVIRON["ACTION"]; a1 = ENVIRON["ARG1"]; a2 = ENVIRON["ARG2"]; out = ENVIRON["OUT"]
            changed = 0; state = 0
            if (action == "drop-case") {
              split(a1, parts, ".")
              case_re = "^[ \t]*TEST(_F)?[ \t]*\\([ \t]*" parts[1] "[ \t]*,[ \t]*" parts[2] "[ \t]*\\)"
            } }
    action == "drop-case" {
      if (state == 0 && $0 ~ case_re) { state = 1; depth = 0; opened = 0 }
      if (state == 1) {
        changed++
        line = $0
        for (i = 1; i <= length(line); i++) {
          c = substr(line, i, 1)
          if (c == "{") { depth++; opened = 1 } else if (c == "}") depth--
        }
        if (opened && depth == 0) state = 2
        next
      }
    }
    action == "drop-lines" { if ($0 ~ a1) { changed++; next } }
    action == "drop-range" {
      if (state == 0 && $0 ~ a1) { state = 1; changed++; next }
      if (state == 1) { changed++; if ($0 ~ a2) state = 2; next }
    }
    action == "sub" {
      line = $0; result = ""; hit = 0
      while ((p = index(line, a1)) > 0) {
        result = result substr(line, 1, p - 1) a2; line = substr(line, p + length(a1)); hit = 1
      }
      if (hit) { changed++; $0 = result line }
    }
    { print > out }
    END { close(out); print changed }
  ' "$target"
}

while IFS= read -r line || [[ -n $line ]]; do
  n=$((n + 1))
  [[ -z ${line//[[:space:]]/} || $line =~ ^[[:space:]]*# ]] && continue
  key=${line%%:*}
  value=${line#*: }
  case $key in
    file) file=$value why="" absent=0
          if [[ ! -f $dir/$file ]]; then
            # An unpacked 0.10.2 tree has no roundtrip or throughput example: their edits wait.
            [[ $file == examples/* ]] || { echo "edits.txt:$n: no file $file" >&2; exit 1; }
            absent=1
            printf '%-28s absent: its edits are not made\n' "$file"
          fi ;;
    why) why=$value ;;
    drop-case | drop-lines | drop-range | sub)
      [[ -n $file ]] || { echo "edits.txt:$n: edit before any 'file:'" >&2; exit 1; }
      ((absent)) && continue
      [[ -n $why ]] || { echo "edits.txt:$n: edit without a 'why:'" >&2; exit 1; }
      arg1=$value arg2=""
      if [[ $key == drop-range || $key == sub ]]; then
        [[ $value == *" => "* ]] || { echo "edits.txt:$n: $key needs 'A => B'" >&2; exit 1; }
        arg1=${value%% => *} arg2=${value#* => }
      fi
      changed=$(apply "$key" "$arg1" "$arg2")
      if [[ $changed == 0 ]]; then
        echo "edits.txt:$n: $file: '$key: $value' changes nothing" >&2
        failed=1
        rm -f "$dir/$file.edited"
        continue
      fi
      mv "$dir/$file.edited" "$dir/$file"
      [[ $key == drop-case ]] && echo "$file $value" >>"$dir/.removed-cases"
      printf '%-28s %-11s %4s lines  %s\n' "$file" "$key" "$changed" "$why" ;;
    *) echo "edits.txt:$n: unknown key '$key'" >&2; exit 1 ;;
  esac
done <"$edits"
exit $failed
