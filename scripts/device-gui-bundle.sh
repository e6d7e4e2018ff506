#!/usr/bin/env bash
# Builds, HERE, what the GUI needs to run on the GPU machine, which has a GPU
# and its driver but no display, no X server, no GLFW and no fonts:
#
#   build-device-gui/flashlab         the GUI build with the CUDA kernels (sm_90, static cudart)
#   build-device-gui/gui-bundle.tar.xz  Xvfb, xkbcomp and the X keyboard data, the DejaVu
#                                     fonts, and every shared library of these three programs
#                                     that is not glibc's or the OpenGL dispatch (libGL, libGLX,
#                                     libOpenGL, libGLdispatch: those come from the .gl packages
#                                     the device README names, the vendor library from the driver)
#
#   bash scripts/device-gui-bundle.sh   # then: device tool, carry ["build-device-gui", ".gl"]
#
# On the device, scripts/device-gui.sh unpacks it and runs a scenario under Xvfb.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
TREE=$ROOT/build-device-gui-cmake
DEST=$ROOT/build-device-gui
STAGE=$(mktemp -d)
trap 'rm -rf "$STAGE"' EXIT
JOBS=${JOBS:-2}

cmake -S "$ROOT" -B "$TREE" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DFLASHLAB_CUDA=ON \
      -DFLASHLAB_GUI=ON -DFLASHLAB_BENCHMARKS=OFF -DFLASHLAB_TESTS=OFF \
      ${CMAKE_CXX_COMPILER_LAUNCHER:+-DCMAKE_CXX_COMPILER_LAUNCHER=$CMAKE_CXX_COMPILER_LAUNCHER} >/dev/null
cmake --build "$TREE" -j"$JOBS" --target flashlab

mkdir -p "$STAGE/bin" "$STAGE/lib" "$STAGE/share" "$STAGE/fonts"
cp /usr/bin/Xvfb /usr/bin/xkbcomp "$STAGE/bin/"
cp -r /usr/share/X11/xkb "$STAGE/share/xkb"
cp /usr/share/fonts/truetype/dejavu/DejaVuSans.ttf /usr/share/fonts/truetype/dejavu/DejaVuSans-Bold.ttf \
   /usr/share/fonts/truetype/dejavu/DejaVuSansMono.ttf "$STAGE/fonts/"
# Shared libraries: everything ldd resolves for the three programs, except
# glibc, the compiler runtime (the device's are newer), the GL dispatch
# (glvnd, from the .gl packages) and CUDA's own (the device has the toolkit).
skip='^(linux-vdso|ld-linux|libc\.|libm\.|libdl\.|libpthread\.|librt\.|libstdc\+\+|libgcc_s|libGL\.|libGLX\.|libOpenGL\.|libGLdispatch\.|libEGL\.|libcublas|libcudart)'
for prog in /usr/bin/Xvfb /usr/bin/xkbcomp "$TREE/flashlab"; do
  ldd "$prog" | awk '/=> \// { print $1, $3 }' | while read -r name path; do
    if ! [[ $name =~ $skip ]]; then cp -L "$path" "$STAGE/lib/$name"; fi
  done
done

# Mesa's software DRI driver and its libraries (LLVM among them): Xvfb's GLX
# extension does not start without one, even when the client renders through
# the NVIDIA driver's GLX. The largest part of the carry, so packed apart, hard.
MESA=$(mktemp -d)
mkdir -p "$MESA/lib/dri"
cp -L /usr/lib/x86_64-linux-gnu/dri/swrast_dri.so "$MESA/lib/dri/"
# And Mesa's client GLX, the fallback when the NVIDIA driver's GLX finds no
# frame-buffer configuration on Xvfb (scripts/device-gui.sh tries it second).
cp -L /usr/lib/x86_64-linux-gnu/libGLX_mesa.so.0 "$MESA/lib/"
for so in /usr/lib/x86_64-linux-gnu/dri/swrast_dri.so /usr/lib/x86_64-linux-gnu/libGLX_mesa.so.0; do
  ldd "$so" | awk '/=> \// { print $1, $3 }' | while read -r name path; do
    if ! [[ $name =~ $skip ]] && [ ! -e "$STAGE/lib/$name" ]; then cp -L "$path" "$MESA/lib/$name"; fi
  done
done

rm -rf "$DEST"
mkdir -p "$DEST"
cp "$TREE/flashlab" "$DEST/flashlab"
strip "$DEST/flashlab"
xz -T2 -9 "$DEST/flashlab"   # flashlab.xz: the carry is tight
tar -C "$STAGE" -cJf "$DEST/gui-bundle.tar.xz" .
tar -C "$MESA" -cf - . | xz -T2 -9e > "$DEST/mesa-dri.tar.xz"
rm -rf "$MESA"
{ git -C "$ROOT" rev-parse --short=12 HEAD 2>/dev/null || echo unknown; } | tr -d '\n' > "$DEST/COMMIT"
if [ -n "$(git -C "$ROOT" status --porcelain --untracked-files=no 2>/dev/null)" ]; then printf -- "-dirty" >> "$DEST/COMMIT"; fi
echo >> "$DEST/COMMIT"
ls -la "$DEST"
echo "libraries bundled: $(ls "$STAGE/lib" | wc -l)"
SIZE_KB=$(du -sk "$DEST" | cut -f1)
echo "total $((SIZE_KB / 1024)) MiB in $DEST (carry limit 64 MiB with the tree and the other carried paths)"
