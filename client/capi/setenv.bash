# vnpu's toolkit environment: what CANN's own environment script sets that programs and build files read,
# pointing at this toolkit. Source it, then build and run (include and library paths stay on the command line).
_vnpu_home="$(cd "$(dirname "${BASH_SOURCE[0]:-$0}")/.." && pwd)"
export ASCEND_HOME_PATH="$_vnpu_home"
export ASCEND_TOOLKIT_HOME="$_vnpu_home"
export ASCEND_OPP_PATH="$_vnpu_home/opp"
export ASCEND_AICPU_PATH="$_vnpu_home"
export ASCENDC_CMAKE_DIR="$_vnpu_home/tikcpp/ascendc_kernel_cmake"
export ASCEND_INSTALL_PATH="${ASCEND_INSTALL_PATH:-$_vnpu_home}"
export LD_LIBRARY_PATH="$_vnpu_home/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export PATH="$_vnpu_home/bin${PATH:+:$PATH}"
unset _vnpu_home
