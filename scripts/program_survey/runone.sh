#!/bin/bash
# runone.sh NAME [ARGS...]: runs $SURVEY/run/NAME/<file> (timeout $TMO s, default 300);
# output and exit status in its out.txt.
source "$(dirname "$0")/common.sh"
n=$1; shift
f=$(meta_field "$n" file)
cd "$SURVEY/run/$n" || exit 1
PYTHONPATH=$TW:$HERE/shim:$SURVEY/run/$n timeout "${TMO:-300}" "$PY" "$f" "$@" > out.txt 2>&1
echo "rc=$?" >> out.txt
