# Sourced by device-build.sh and build-variants.sh: the CMake configure of the
# binaries the GPU machine runs (Release, sm_90, static cudart, no GUI).
# No pkg-config: the GPU machine may lack libcairo, so chart export there is SVG
# and CSV only (cairo is found through pkg-config; nothing else of this build is).
# usage: device_configure SOURCE_DIR BUILD_DIR [EXTRA_CMAKE_ARGS...]
device_configure() {
  local src=$1 tree=$2
  shift 2
  cmake -S "$src" -B "$tree" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
        -DFLASHLAB_CUDA=ON -DFLASHLAB_GUI=OFF -DFLASHLAB_BENCHMARKS=OFF -DFLASHLAB_TESTS=ON \
        -DCMAKE_DISABLE_FIND_PACKAGE_PkgConfig=ON -U "CAIRO*" -U "IMGUI*" "$@"
}
