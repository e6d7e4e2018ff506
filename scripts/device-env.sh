# Sourced by the scripts that run ON the GPU machine from a folder holding
# build-device/ (scripts/device-build.sh), assets/ and scripts/: it moves to
# that folder, makes $OUT (default device-out/ there) and points the binaries
# at the assets and at the CUDA libraries.
cd "$(dirname "${BASH_SOURCE[0]}")/.." || exit 2
OUT=${OUT:-$PWD/device-out}
mkdir -p "$OUT"
export FLASHLAB_ASSETS=$PWD/assets
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:/usr/local/cuda/targets/x86_64-linux/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
