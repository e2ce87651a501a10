#!/bin/bash
# Run CANN's own runtime samples, unchanged, against vnpu: each sample's run.sh builds it with its own CMakeLists
# against `vnpu toolkit` and runs it on a daemon this script starts (4 devices, a free 127.0.0.1 port) and stops.
#
#   examples/cann_samples.sh RUNTIME/example [SAMPLE_DIR_PATTERN]
#
# RUNTIME is a checkout of CANN's runtime repository (github.com/hicann/runtime). One line per sample: its exit
# status and the last line of its output that says how it went; logs in $VNPU_SAMPLES_LOGS (default a temporary
# directory). The samples write their build directories into the checkout, as their run.sh always does.
set -uo pipefail

examples=$(cd "${1:?usage: $0 RUNTIME/example [SAMPLE_DIR_PATTERN]}" && pwd)
pattern=${2:-}
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
vnpu=${VNPU:-$repo/.venv/bin/vnpu}
logs=${VNPU_SAMPLES_LOGS:-$(mktemp -d)}
mkdir -p "$logs"

T=$("$vnpu" toolkit) || exit 1
source "$T/bin/setenv.bash"
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"$vnpu" serve --port "$port" --devices 4 > "$logs/daemon.log" 2>&1 &
daemon=$!
trap 'kill "$daemon" 2> /dev/null; wait "$daemon" 2> /dev/null' EXIT
export VNPU_ENDPOINT=http://127.0.0.1:$port ASCEND_INSTALL_PATH=$T
for _ in $(seq 50); do
    grep -q "listening on http" "$logs/daemon.log" && break  # the banner, not the token notice before it
    sleep 0.2
done
set --  # set_sample_env.sh reads the arguments it is sourced with
cd "$examples" && source ./set_sample_env.sh > "$logs/set_sample_env.log" || exit 1

failed=0
for run in $(find . -name run.sh | sort); do
    sample=${run#./}
    sample=${sample%/run.sh}
    [[ -n "$pattern" && "$sample" != *$pattern* ]] && continue
    log=$logs/${sample//\//_}.log
    (cd "$sample" && timeout "${VNPU_SAMPLE_TIMEOUT:-90}" bash run.sh > "$log" 2>&1)
    status=$?
    [[ $status -eq 0 ]] || failed=$((failed + 1))
    verdict=$(grep -E 'SUCCESS|FAIL|successfully|ERROR|PASSED|SKIP' "$log" | grep -v -E 'Build|Configur|\[ *[0-9]+%\]' | tail -1)
    printf '%3d  %-70s %s\n' "$status" "$sample" "${verdict:0:100}"
done
echo "logs: $logs; $failed sample(s) exited non-zero"
exit $((failed > 0))
