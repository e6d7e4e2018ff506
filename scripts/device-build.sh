#!/usr/bin/env bash
# Builds, HERE (the machine with Catch2, nlohmann, CLI11), the binaries
# the GPU machine runs: `flashlab`, the GPU test binaries (the ring's over
# several GPUs among them) and the backward
# rungs' direct checker (flashlab_bwd_check), Release, sm_90,
# static cudart, no GUI; stripped and copied to build-device/bin.
#
#   bash scripts/device-build.sh            # then: device tool, carry ["build-device"]
#   CMAKE_ARGS="-DFLASHLAB_HOPPER_BWD_D128_BR=64" bash scripts/device-build.sh   # an A/B variant
#
# CMAKE_ARGS (optional) is passed to the configure step; a cache variable it sets
# stays in the tree until set again (pass the default back for the next build).
# The CMake tree lives in build-device-cmake (kept between runs, so rebuilds are
# incremental); only build-device/ travels (carry limit 64 MiB; this prints its
# size). The GPU machine has the CUDA 13 toolkit for libcublas.so.13
# (scripts/device-run.sh sets LD_LIBRARY_PATH) and takes assets from the repo
# tree (FLASHLAB_ASSETS).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
TREE=$ROOT/build-device-cmake
DEST=$ROOT/build-device
JOBS=${JOBS:-2}

# shellcheck source=scripts/device-configure.sh
. "$ROOT/scripts/device-configure.sh"
# shellcheck disable=SC2086  # CMAKE_ARGS: several arguments
device_configure "$ROOT" "$TREE" ${CMAKE_ARGS:-} >/dev/null
cmake --build "$TREE" -j"$JOBS" --target flashlab flashlab_kernels_gpu_tests flashlab_ceilings_gpu_tests \
      flashlab_bwd_check flashlab_ring_gpu_tests

rm -rf "$DEST"
mkdir -p "$DEST/bin"
cp "$TREE/flashlab" "$DEST/bin/flashlab"
cp "$TREE/tests/kernels/flashlab_kernels_gpu_tests" "$DEST/bin/flashlab_kernels_gpu_tests"
cp "$TREE/tests/ceilings/flashlab_ceilings_gpu_tests" "$DEST/bin/flashlab_ceilings_gpu_tests"
cp "$TREE/tests/kernels/flashlab_bwd_check" "$DEST/bin/flashlab_bwd_check"
cp "$TREE/tests/kernels/flashlab_ring_gpu_tests" "$DEST/bin/flashlab_ring_gpu_tests"
strip "$DEST"/bin/*
# The commit the binaries were built from, for the metadata of every result set.
{ git -C "$ROOT" rev-parse --short=12 HEAD 2>/dev/null || echo unknown; } | tr -d '\n' > "$DEST/COMMIT"
if [ -n "$(git -C "$ROOT" status --porcelain --untracked-files=no 2>/dev/null)" ]; then printf -- "-dirty" >> "$DEST/COMMIT"; fi
echo >> "$DEST/COMMIT"
cat > "$DEST/README" <<TXT
Built $(date -u +%Y-%m-%dT%H:%M:%SZ) by scripts/device-build.sh from commit $(cat "$DEST/COMMIT")
(Release, sm_90, static cudart, dynamic libcublas.so.13). Run on the GPU machine:
  bash scripts/device-run.sh all
TXT

echo "build-device ready:"
ls -la "$DEST/bin"
echo "shared libraries beyond glibc/libstdc++ (the GPU machine must have them):"
for b in "$DEST"/bin/*; do
  echo "  $(basename "$b"): $(readelf -d "$b" | sed -n 's/.*NEEDED.*\[\(.*\)\]/\1/p' |
        grep -vE '^(libc|libm|libstdc\+\+|libgcc_s|ld-linux-x86-64|libdl|libpthread|librt)\.so' | tr '\n' ' ')"
done
SIZE_KB=$(du -sk "$DEST" | cut -f1)
echo "total $((SIZE_KB / 1024)) MiB in $DEST (carry limit 64 MiB)"
if [ "$SIZE_KB" -gt $((50 * 1024)) ]; then echo "warning: build-device is over 50 MiB" >&2; fi
