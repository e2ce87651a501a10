#!/bin/bash
# CANN's operator example programs, unchanged, as a conformance suite for vnpu's operator library: each
# `<op>/examples/test_aclnn_*.cpp` (arch35 variants left out) is built with its own repository's build line against
# `vnpu toolkit`, run on a daemon this script starts (with VNPU_DUMP_LAUNCHES, so that each launch's tensors are
# written), and what it prints is compared with vnpu's float64 reference of each launch it made
# (examples/cann_ops/verdict.py says built / ran / matched and why not, per example and per repository).
#
#   examples/cann_ops_examples.sh CHECKOUTS [PATTERN...]
#
# CHECKOUTS holds checkouts of hicann/ops-math, ops-nn, ops-transformer and ops-cv named so (any of them may be
# missing); PATTERNs keep the examples whose path contains one of them. Logs and verdicts go to $VNPU_OPS_EXAMPLES_LOGS
# (default a temporary directory): verdicts.tsv, summary.md and one directory per example. $JOBS builds at once
# (default 2); the runs are one at a time (the daemon's dump is attributed to the program running). Nothing is
# written into the checkouts.
set -uo pipefail

# one example: its repository's own g++ line, into $logs/<repo>/<id>/ -- the default package mode, or for an
# experimental operator the custom package mode its build script uses (`--run_example OP eager cust`, vendor
# "custom": the toolkit's opp/vendors/custom_<repo>/op_api/lib/libcust_opapi.so is libopapi.so)
build_one() {
    local repo=$1 file=$2 dir=$3
    mkdir -p "$dir"
    echo "$file" > "$dir/source"
    local bin=$dir/test_aclnn
    local line
    local cust=$ASCEND_HOME_PATH/opp/vendors/custom_${repo#ops-}/op_api
    if [[ "$file" == */experimental/* ]]; then
        line=(g++ "$file" -I "$cust/include" -I "$INCLUDE_PATH" -I "$INCLUDE_PATH/aclnnop" -L "$cust/lib"
              -L "$EAGER_LIBRARY_PATH" -lcust_opapi)
        [[ $repo == ops-nn ]] && line+=(-lopapi_math)
        line+=(-lascendcl -lnnopbase -o "$bin" "-Wl,-rpath=$cust/lib")
        repo=custom
    fi
    case $repo in
        ops-math) line=(g++ "$file" -I "$INCLUDE_PATH" -I "$ACLNN_INCLUDE_PATH" -L "$EAGER_LIBRARY_PATH"
                        -lopapi_math -lascendcl -lnnopbase -o "$bin") ;;
        ops-nn) line=(g++ "$file" -I "$INCLUDE_PATH" -I "$INCLUDE_PATH/aclnnop" -I "$ACLNN_INCLUDE_PATH"
                      -L "$EAGER_LIBRARY_OPP_PATH" -L "$EAGER_LIBRARY_PATH" -lopapi_nn -lopapi_math -lascendcl
                      -lnnopbase -o "$bin") ;;
        ops-transformer) line=(g++ "$file" -I "$INCLUDE_PATH" -I "$ACLNN_INCLUDE_PATH"
                               -I "$EAGER_INCLUDE_OPP_ACLNNOP_PATH" -L "$EAGER_LIBRARY_OPP_PATH"
                               -L "$EAGER_LIBRARY_PATH" -lopapi -lopapi_transformer -lascendcl -lnnopbase -lpthread
                               -lhccl -o "$bin") ;;
        ops-cv) line=(g++ "$file" -I "$INCLUDE_PATH" -I "$ACLNN_INCLUDE_PATH" -L "$EAGER_LIBRARY_PATH"
                      -lopapi_cv -lascendcl -lnnopbase -o "$bin") ;;
        custom) ;;
    esac
    echo "${line[*]}" > "$dir/build.log"
    "${line[@]}" >> "$dir/build.log" 2>&1
    echo $? > "$dir/build.status"
}
export -f build_one

# the whole run is one function, read before it runs: editing this file meanwhile cannot change a run
main() {
    checkouts=$(cd "${1:?usage: $0 CHECKOUTS [PATTERN...]}" && pwd)
    patterns=("${@:2}")
    repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
    vnpu=${VNPU:-$repo/.venv/bin/vnpu}
    python=${PYTHON:-$repo/.venv/bin/python}
    logs=${VNPU_OPS_EXAMPLES_LOGS:-$(mktemp -d)}
    mkdir -p "$logs"

    T=$("$vnpu" toolkit) || exit 1
    source "$T/bin/setenv.bash"
    unset ASCEND_CUSTOM_OPP_PATH  # the vendor directories are the toolkit's
    # the repositories' build scripts name these (scripts/build.conf.sh, build.sh)
    export INCLUDE_PATH=$ASCEND_HOME_PATH/include ACLNN_INCLUDE_PATH=$ASCEND_HOME_PATH/include/aclnn
    export EAGER_LIBRARY_PATH=$ASCEND_HOME_PATH/lib64 EAGER_LIBRARY_OPP_PATH=$ASCEND_OPP_PATH/lib64
    export EAGER_INCLUDE_OPP_ACLNNOP_PATH=$ASCEND_OPP_PATH/include/aclnnop

    examples=$logs/examples.txt
    : > "$examples"
    for name in ops-math ops-nn ops-transformer ops-cv; do
        [[ -d "$checkouts/$name" ]] || { echo "($checkouts/$name: no checkout, skipped)"; continue; }
        (cd "$checkouts/$name" && find . -path '*/examples/*' -name 'test_aclnn_*.cpp' -not -path '*arch35*' | sort) |
            while read -r rel; do
                rel=${rel#./}
                if (( ${#patterns[@]} )); then
                    kept=0
                    for pattern in "${patterns[@]}"; do [[ "$rel" == *$pattern* ]] && kept=1 && break; done
                    (( kept )) || continue
                fi
                printf '%s\t%s\t%s\n' "$name" "$checkouts/$name/$rel" "$logs/$name/${rel//\//__}"
            done >> "$examples"
    done
    echo "$(wc -l < "$examples") examples; building ($T, ${JOBS:-2} at once)"
    tr '\t' '\n' < "$examples" | xargs -d '\n' -n 3 -P "${JOBS:-2}" bash -c 'build_one "$@"' _

    port=$("$python" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
    dump=$logs/dump
    VNPU_DUMP_LAUNCHES=$dump "$vnpu" serve --port "$port" > "$logs/daemon.log" 2>&1 &
    daemon=$!
    trap 'kill "$daemon" 2> /dev/null; wait "$daemon" 2> /dev/null' EXIT
    export VNPU_ENDPOINT=http://127.0.0.1:$port ASCEND_SLOG_PRINT_TO_STDOUT=1
    for _ in $(seq 50); do
        grep -q "listening on http" "$logs/daemon.log" && break  # the banner, not the token notice before it
        sleep 0.2
    done

    echo "running"
    while IFS=$'\t' read -r name file dir; do
        [[ "$(cat "$dir/build.status")" == 0 ]] || continue
        mkdir -p "$dir/dump" "$dir/cwd"
        (cd "$dir/cwd" && timeout "${VNPU_EXAMPLE_TIMEOUT:-60}" "$dir/test_aclnn" < /dev/null > "$dir/run.out" \
            2> "$dir/run.err")
        echo $? > "$dir/run.status"
        find "$dump" -maxdepth 1 -name '*.npz' -exec mv -t "$dir/dump" {} + 2> /dev/null
        rm -f "$dir/test_aclnn"
    done < "$examples"

    "$python" "$repo/examples/cann_ops/verdict.py" "$logs" --markdown "$logs/summary.md" > "$logs/verdicts.txt"
    grep -v -E '^(matched|ran|built|failed) ' "$logs/verdicts.txt"
    echo "logs: $logs (verdicts.txt: one line per example)"
}

main "$@"
exit
