#!/usr/bin/env bash
# Runs ON the GPU machine (Ubuntu 24.04, NVIDIA driver and CUDA 13, no X
# server, no GLFW, no fonts): the GUI under the carried Xvfb, with the GPU's
# OpenGL through GLX, running a scenario that benchmarks the kernel ladder with
# DRAM counters and takes screenshots. docs/gpu-gui.md has the whole recipe.
#
# Needs, in the repository root (device tool: carry ["build-device-gui", ".gl"]):
#   build-device-gui/flashlab.xz, gui-bundle.tar.xz, mesa-dri.tar.xz  (scripts/device-gui-bundle.sh)
#   .gl/*.deb  (libglvnd0, libgl1, libglx0, libopengl0, libegl1, ...: the GL dispatch)
#
#   bash scripts/device-gui.sh [SCENARIO] [FRAMES]
#     SCENARIO  default assets/scenarios/gpu-ladder-counters.json
#     FRAMES    default 40: frames after the scenario's waits (wait_bench holds the count)
#
# Screenshots land in $OUT (the scenario's export_dir is taken relative to
# $OUT), with the final window as $OUT/final.png and the run's log as $OUT/gui.log.
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
SCENARIO=${1:-assets/scenarios/gpu-ladder-counters.json}
FRAMES=${2:-40}
OUT=${OUT:-$ROOT/device-gui-out}
DISPLAY_NUM=${DISPLAY_NUM:-87}
PREFIX=/tmp/flashlab-gui
mkdir -p "$OUT" "$PREFIX"
say() { echo "device-gui: $*"; }
fail() { echo "device-gui: FAILED: $*" >&2; exit 1; }

[ -f build-device-gui/flashlab.xz ] || fail "build-device-gui/flashlab.xz is missing (run scripts/device-gui-bundle.sh here, carry build-device-gui)"
[ -f build-device-gui/mesa-dri.tar.xz ] || fail "build-device-gui/mesa-dri.tar.xz is missing (scripts/device-gui-bundle.sh)"
[ -f build-device-gui/gui-bundle.tar.xz ] || fail "build-device-gui/gui-bundle.tar.xz is missing (scripts/device-gui-bundle.sh)"
ls .gl/*.deb >/dev/null 2>&1 || fail "no .gl/*.deb (the GL dispatch packages; docs/gpu-gui.md says how to fetch them; carry .gl)"
[ -f "$SCENARIO" ] || fail "no scenario $SCENARIO"
say "commit of the build: $(cat build-device-gui/COMMIT 2>/dev/null || echo unknown)"

# 1. The bundle (Xvfb, xkbcomp, xkb data, fonts, their libraries) and the GL
#    dispatch packages, unpacked into a prefix: nothing is installed in /.
tar -C "$PREFIX" -xJf build-device-gui/gui-bundle.tar.xz || fail "cannot unpack gui-bundle.tar.xz"
tar -C "$PREFIX" -xJf build-device-gui/mesa-dri.tar.xz || fail "cannot unpack mesa-dri.tar.xz"
xz -dc build-device-gui/flashlab.xz > "$PREFIX/flashlab" && chmod +x "$PREFIX/flashlab" || fail "cannot unpack flashlab.xz"
for f in .gl/*.deb; do dpkg -x "$f" "$PREFIX/gl" || fail "dpkg -x $f"; done
say "unpacked the bundle ($(ls "$PREFIX/lib" | wc -l) libraries) and $(ls .gl/*.deb | wc -l) GL packages into $PREFIX"
GL_LIB=$PREFIX/gl/usr/lib/x86_64-linux-gnu
export LD_LIBRARY_PATH=$GL_LIB:$PREFIX/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export __GLX_VENDOR_LIBRARY_NAME=nvidia        # glvnd: the driver's GLX, not Mesa's
export LIBGL_DRIVERS_PATH=$PREFIX/lib/dri       # Xvfb's GLX extension: Mesa's software DRI driver
export FLASHLAB_FONT_DIR=$PREFIX/fonts
export FLASHLAB_ASSETS=$ROOT/assets
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | sed 's/^/device-gui: GPU: /'
ls /usr/lib/x86_64-linux-gnu/libGLX_nvidia.so.0 /usr/local/nvidia/lib64/libGLX_nvidia.so.0 2>/dev/null | sed 's/^/device-gui: vendor GLX: /'
[ -d /usr/local/nvidia/lib64 ] && export LD_LIBRARY_PATH=$LD_LIBRARY_PATH:/usr/local/nvidia/lib64

# 2. Xvfb with the carried keyboard data. The X server runs xkbcomp from its
#    built-in directory (/usr/bin) and has no option to move it: on this bare
#    machine, link the carried one there when none is installed.
if [ ! -x /usr/bin/xkbcomp ]; then
  ln -s "$PREFIX/bin/xkbcomp" /usr/bin/xkbcomp 2>/dev/null && say "linked /usr/bin/xkbcomp to the carried one" \
    || say "no /usr/bin/xkbcomp and cannot link one: Xvfb may refuse to start its keyboard"
fi
"$PREFIX/bin/Xvfb" ":$DISPLAY_NUM" -screen 0 1920x1080x24 -xkbdir "$PREFIX/share/xkb" +extension GLX -nolisten tcp \
  >"$OUT/xvfb.log" 2>&1 &
XVFB_PID=$!
trap 'kill "$XVFB_PID" 2>/dev/null' EXIT
for _ in $(seq 1 50); do
  [ -S "/tmp/.X11-unix/X$DISPLAY_NUM" ] && break
  kill -0 "$XVFB_PID" 2>/dev/null || { cat "$OUT/xvfb.log"; fail "Xvfb exited"; }
  sleep 0.1
done
[ -S "/tmp/.X11-unix/X$DISPLAY_NUM" ] || { cat "$OUT/xvfb.log"; fail "Xvfb did not open display :$DISPLAY_NUM"; }
export DISPLAY=:$DISPLAY_NUM
say "Xvfb on $DISPLAY (pid $XVFB_PID)"

# 3. The GUI: the scenario runs the ladder with counters, waits for it, and
#    takes its screenshots into its export_dir, here inside $OUT.
SCENARIO_ABS=$(readlink -f "$SCENARIO")
say "flashlab gui --scenario $SCENARIO --frames $FRAMES"
run_gui() {
  (cd "$OUT" && timeout 570 "$PREFIX/flashlab" gui --scenario "$SCENARIO_ABS" --frames "$FRAMES" \
     --screenshot "$OUT/final.png" --stats) >"$OUT/gui.log" 2>&1
}
run_gui
RC=$?
# The NVIDIA driver's GLX may find no frame-buffer configuration on Xvfb: then
# Mesa's (software rendering on the CPU; the kernels still run on the GPU).
if [ $RC -ne 0 ] && grep -q "GLX" "$OUT/gui.log"; then
  say "with the NVIDIA GLX: $(tail -1 "$OUT/gui.log"); again with Mesa's GLX (software rendering)"
  export __GLX_VENDOR_LIBRARY_NAME=mesa
  run_gui
  RC=$?
fi
say "GL vendor library: $__GLX_VENDOR_LIBRARY_NAME"
cat "$OUT/gui.log"
say "flashlab gui exited with $RC"
# The files come back at most two folders down: flatten the export folder into $OUT.
for d in "$OUT"/*/; do
  [ -d "$d" ] || continue
  for f in "$d"*; do [ -f "$f" ] && mv "$f" "$OUT/$(basename "$d")-$(basename "$f")"; done
  rmdir "$d" 2>/dev/null
done
say "files in \$OUT:"
ls -la "$OUT"
exit $RC
