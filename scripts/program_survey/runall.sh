#!/bin/bash
# runall.sh NAME...: runs each single-process program with its flags from programs.json;
# prints NAME and its exit status.
source "$(dirname "$0")/common.sh"
for n in "$@"; do
  # shellcheck disable=SC2046
  "$HERE/runone.sh" "$n" $(meta_field "$n" args)
  echo "=== $n: $(tail -1 "$SURVEY/run/$n/out.txt")"
done
