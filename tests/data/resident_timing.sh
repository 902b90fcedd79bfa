#!/usr/bin/env bash
# Whole-process `elroy tools call examine_memories` with the built-in embedder, with and without the
# resident embedding worker (docs/performance.md, "Questions without loading the model").
#
#   tests/data/resident_timing.sh ELROY_BINARY HOME MODEL_DIR
#
# HOME: a home written by tests/data/write_locomo_home.py. Needs hyperfine. Kills the home's
# embedding workers between the "no worker running" runs (matched on this HOME only).
set -euo pipefail
binary=$1
export ELROY_HOME=$2 TZ=UTC0 ELROY_EMBEDDING_MODEL=builtin ELROY_EMBEDDING_MODEL_PATH=$3
question='{"question":"What did Tim say about his basketball team?"}'
run=("$binary" tools call examine_memories --args "$question")
kill_workers="for p in \$(pgrep -f '[m]odels embed --worker'); do tr '\\0' '\\n' < /proc/\$p/environ | grep -qx 'ELROY_HOME=$ELROY_HOME' && kill \$p; done; sleep 0.3; true"
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "== no worker running (each run after killing it)"
hyperfine -N -r 15 --prepare "sh -c \"$kill_workers\"" "${run[*]@Q}"
"${run[@]}" > /dev/null
sleep 1
echo "== a worker running"
hyperfine -N -r 30 "${run[*]@Q}"
/usr/bin/time -f "peak RSS of the question's process: %M KiB" "${run[@]}" > /dev/null
echo "== embedding_worker_idle_seconds: 0"
ELROY_EMBEDDING_WORKER_IDLE_SECONDS=0 hyperfine -N -r 30 "${run[*]@Q}"
ELROY_EMBEDDING_WORKER_IDLE_SECONDS=0 /usr/bin/time -f "peak RSS of the question's process: %M KiB" "${run[@]}" > /dev/null
echo "== keywords only"
ELROY_EMBEDDING_MODEL= hyperfine -N -r 30 "${run[*]@Q}"
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
