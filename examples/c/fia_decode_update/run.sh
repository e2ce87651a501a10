#!/bin/bash
# Build the vnpu example "fia_decode_update" with CMake into build/ and run it; exits with the program's status.
#   ASCEND_INSTALL_PATH=$(vnpu toolkit) VNPU_ENDPOINT=http://127.0.0.1:9470 bash run.sh
# (ASCEND_INSTALL_PATH defaults to ASCEND_HOME_PATH, which a sourced setenv.bash exports.)
set -e

_ASCEND_INSTALL_PATH=${ASCEND_INSTALL_PATH:-$ASCEND_HOME_PATH}
if [ -z "$_ASCEND_INSTALL_PATH" ] || [ ! -f "$_ASCEND_INSTALL_PATH/bin/setenv.bash" ]; then
    echo "[ERROR] set ASCEND_INSTALL_PATH to a CANN package with bin/setenv.bash (for vnpu: \$(vnpu toolkit))" >&2
    exit 1
fi
source "$_ASCEND_INSTALL_PATH/bin/setenv.bash"

cd "$(dirname "${BASH_SOURCE[0]}")"
rm -rf build
mkdir -p build
cmake -S . -B build \
    -DASCEND_CANN_PACKAGE_PATH="${_ASCEND_INSTALL_PATH}"
cmake --build build -j

set +e
./build/main 2>&1 | tee build/output_msg.txt
ret=${PIPESTATUS[0]}
set -e
if [ "$ret" -ne 0 ]; then
    echo "[ERROR] fia_decode_update failed with exit code $ret (output in build/output_msg.txt)" >&2
    exit "$ret"
fi
echo "[INFO] fia_decode_update ran successfully"
exit 0
