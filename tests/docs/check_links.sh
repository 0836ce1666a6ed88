#!/usr/bin/env bash
# check_links.sh SOURCE_DIR — every relative link of every Markdown file of the source tree
# (outside build folders and fenced code) names a file or folder that exists. Test docs.links.
set -uo pipefail
root=${1:?usage: check_links.sh SOURCE_DIR}
cd "$root" || exit 2
bad=0 files=0
while IFS= read -r md; do
  files=$((files + 1))
  dir=$(dirname "$md")
  while IFS=$'\t' read -r line target; do
    path=${target%%#*}
    [[ -z $path ]] && continue
    if [[ ! -e $dir/$path ]]; then
      echo "$md:$line: no such file: $target"
      bad=$((bad + 1))
    fi
  done < <(awk '
    /^```/ { fenced = !fenced; next }
    fenced { next }
    {
      s = $0
      while (match(s, /\]\([^) \t]+\)/)) {
        t = substr(s, RSTART + 2, RLENGTH - 3)
        if (t !~ /^(https?:|mailto:|#)/) printf "%d\t%s\n", NR, t
        s = substr(s, RSTART + RLENGTH)
      }
    }' "$md")
done < <(find . \( -name build -o -name 'build-*' -o -name .git \) -prune -o -name '*.md' -print | sort)
echo "check_links: $files Markdown files, $bad broken links"
((bad == 0))
