#!/bin/bash
# dist.sh NAME [FLAGS...]: a ps/worker-flag program as 1 ps + 2 workers on free 127.0.0.1
# ports (outputs in $SURVEY/run/NAME/{ps,w0,w1}.txt); ends the ps by its PID.
source "$(dirname "$0")/common.sh"
n=$1; shift
f=$(meta_field "$n" file)
read -r P0 P1 P2 < <("$PY" -c "
import socket
ss = [socket.socket() for _ in range(3)]
for s in ss: s.bind(('127.0.0.1', 0))
print(*[s.getsockname()[1] for s in ss])")
cd "$SURVEY/run/$n" || exit 1
export PYTHONPATH=$TW:$HERE/shim:$SURVEY/run/$n
H="--ps_hosts=127.0.0.1:$P0 --worker_hosts=127.0.0.1:$P1,127.0.0.1:$P2"
"$PY" "$f" $H --job_name=ps --task_index=0 "$@" > ps.txt 2>&1 & PS=$!
timeout "${TMO:-300}" "$PY" "$f" $H --job_name=worker --task_index=0 "$@" > w0.txt 2>&1 & W0=$!
timeout "${TMO:-300}" "$PY" "$f" $H --job_name=worker --task_index=1 "$@" > w1.txt 2>&1 & W1=$!
wait $W0; echo "w0 rc=$?"; wait $W1; echo "w1 rc=$?"
kill $PS
