#!/usr/bin/env bash
# Regenerates this folder's *-info.hex and *-map.hex from Cyclone DDS 0.10.2 (Debian:
# cyclonedds-dev): Cyclone's idlc compiles TypeInfo.idl to C, and each type's
# TYPE_INFO_CDR_<T> (XTypes TypeInformation) and TYPE_MAP_CDR_<T> (TypeMapping) arrays are
# written out as hex, <T> being the scoped name with '_' for '::'. Nothing is run but idlc.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cd "$work"
/usr/bin/idlc -l c "$here/TypeInfo.idl"
rm -f "$here"/*-info.hex "$here"/*-map.hex
python3 - "$work/TypeInfo.c" "$here" <<'PY'
import re, sys
src = open(sys.argv[1]).read()
version = re.search(r'Cyclone DDS: (\S+)', src).group(1)
for m in re.finditer(r'#define TYPE_(INFO|MAP)_CDR_(\w+) \(unsigned char \[\]\)\{(.*?)\}', src, re.S):
    kind, name = m.group(1).lower(), m.group(2)
    data = re.findall(r'0x([0-9a-f]{2})', m.group(3))
    with open(f"{sys.argv[2]}/{name}-{kind}.hex", "w") as f:
        what = "TypeInformation" if kind == "info" else "TypeMapping"
        f.write(f"# {name}: XTypes {what}, XCDR2 LE, as Cyclone DDS {version} idlc generates it\n")
        for i in range(0, len(data), 16):
            f.write(" ".join(data[i:i + 16]) + "\n")
PY
