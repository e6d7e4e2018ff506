#!/usr/bin/env bash
# Configures FlashLab with one combination of the optional parts, and with
# BUILD=1 builds the CLI, runs its headless main job, and checks that the parts
# left out refuse in one line (exit 2). Exit 77 (skipped) when
# the combination needs a toolchain this machine does not have.
# usage: check-config.sh SOURCE_DIR BINARY_DIR CUDA(ON|OFF) GUI(ON|OFF) BUILD(0|1) [BUILD_TYPE]
# (BUILD_TYPE: the calling build's, Release when not given)
set -euo pipefail
src=$1 bin=$2 cuda=$3 gui=$4 build=$5 type=${6:-Release}
if [ "$cuda" = ON ] && ! command -v nvcc >/dev/null && [ ! -x /usr/local/cuda/bin/nvcc ]; then
  echo "SKIPPED: no nvcc on this machine, cannot configure with FLASHLAB_CUDA=ON"
  exit 77
fi
rm -rf "$bin"
cmake -S "$src" -B "$bin" -DCMAKE_BUILD_TYPE="$type" -DFLASHLAB_CUDA="$cuda" -DFLASHLAB_GUI="$gui" \
  -DFLASHLAB_TESTS=OFF -DFLASHLAB_BENCHMARKS=OFF > "$bin.configure.log" 2>&1 || {
  cat "$bin.configure.log"; exit 1; }
grep "FlashLab:" "$bin.configure.log"
if [ "$build" = 1 ]; then
  cmake --build "$bin" --target flashlab -j "$(nproc)" > "$bin.build.log" 2>&1 || { tail -50 "$bin.build.log"; exit 1; }
  cd "$bin"
  env -u DISPLAY -u WAYLAND_DISPLAY ./flashlab compare --csv comparison.csv | head -12
  test -s comparison.csv
  # What the build left out says so in one line and exit 2, never a crash.
  refused() {  # refused MESSAGE COMMAND...
    local message=$1 code=0; shift
    "$@" > refused.out 2>&1 || code=$?
    if [ "$code" != 2 ] || ! grep -q "$message" refused.out; then
      echo "FAIL: '$*' exited $code, expected 2 and '$message':"; cat refused.out; exit 1
    fi
    echo "refused as expected: $*"
  }
  if [ "$cuda" = OFF ]; then
    refused "this build has no CUDA support" ./flashlab bench --kernels fa1 --batch 1 --heads 1 --seq 256 --head-dim 64
  fi
  if [ "$gui" = OFF ]; then
    refused "built without the GUI" env -u DISPLAY -u WAYLAND_DISPLAY ./flashlab gui
  fi
fi
echo "OK: FLASHLAB_CUDA=$cuda FLASHLAB_GUI=$gui"
