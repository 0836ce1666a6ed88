#!/usr/bin/env bash
# Regenerates this folder's *.hex from Cyclone DDS (Debian: cyclonedds-dev): Cyclone's idlc
# makes the C types of Vectors.idl, gen.c serializes each sample in XCDR1 and XCDR2. Run it
# where a participant may start (tools/contained -- interop/cdr/cyclone/make.sh keeps its
# traffic on a private loopback).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cd "$work"
/usr/bin/idlc -l c "$here/Vectors.idl"
cc -O1 -Wall -Werror -o gen "$here/gen.c" Vectors.c -I. -lddsc
cd "$here"
"$work/gen"
