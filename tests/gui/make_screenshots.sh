#!/usr/bin/env bash
# Regenerates the screenshots of docs/user-guide.md (docs/images/*.png) from a
# build, under Xvfb at 1600×1000, from the scenarios in assets/scenarios and
# the measured ring results of docs/results/ring; then the ring's charts of
# those results (flashlab ring --chart, no display needed).
# Usage: tests/gui/make_screenshots.sh [BUILD_DIR]   (default: build)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
exe=${1:-$root/build}/flashlab
out=$root/docs/images
sc=$root/assets/scenarios
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$out"
[ -x "$exe" ] || { echo "make_screenshots: no flashlab at $exe (build first)" >&2; exit 2; }
command -v xvfb-run >/dev/null || { echo "make_screenshots: xvfb-run is missing (apt-get install xvfb)" >&2; exit 2; }

# variant BASE NAME 'JSON-KEYS': BASE with extra settings applied at frame 0,
# its files (results, a profile) named by absolute paths: the copy lives in $tmp.
variant() {
  python3 - "$sc/$1.json" "$tmp/$2.json" "{$3}" <<'PY'
import json, os, sys
src, dst, keys = sys.argv[1:4]
d = os.path.dirname(os.path.abspath(src))
j = json.load(open(src))
fix = lambda p: p if os.path.isabs(p) else os.path.normpath(os.path.join(d, p))
for k in ("results", "ring_results"):
    if isinstance(j.get(k), str): j[k] = fix(j[k])
if isinstance(j.get("hardware"), dict): j["hardware"]["file"] = fix(j["hardware"]["file"])
j["script"] = [dict({"frame": 0}, **json.loads(keys))]
json.dump(j, open(dst, "w"))
PY
  echo "$tmp/$2.json"
}
# shot NAME SCENARIO [flashlab gui options...]
shot() {
  local name=$1 scen=$2
  shift 2
  xvfb-run -a -s "-screen 0 1600x1000x24" "$exe" gui --frames 12 --scenario "$scen" --screenshot "$out/$name.png" "$@"
  echo "docs/images/$name.png"
}

shot overview "$sc/lecture-fa1-vs-fa2.json"
shot controls "$sc/lecture-fa1-vs-fa2.json" --screenshot-panel controls
shot tiling "$sc/lecture-l2-measured.json" --screenshot-panel tiling
# The counters of FA1 and FA2 with the H200's measured DRAM bytes: a tall window, so both show.
xvfb-run -a -s "-screen 0 1600x1900x24" "$exe" gui --frames 12 --scenario "$sc/lecture-l2-measured.json" \
  --width 1600 --height 1800 --screenshot-panel counters --screenshot "$out/counters.png"
echo docs/images/counters.png
shot tiling-causal "$sc/lecture-causal.json" --screenshot-panel tiling
shot tiling-long-sequence "$sc/lecture-long-sequence.json" --screenshot-panel tiling
for tab in roofline io-vs-n io-vs-m io-vs-d ai-vs-n; do
  shot "plot-$tab" "$(variant lecture-fa1-vs-fa2 "$tab" "\"tab\": \"$tab\", \"plots_large\": true")" --screenshot-panel plots
done
# The hierarchical roofline: the measured H100 profile and the H100 runs of docs/results.
shot plot-roofline-hier "$(variant lecture-fa1-vs-fa2 roofline-hier "\"tab\": \"roofline-hier\", \"plots_large\": true, \"hardware\": {\"file\": \"$root/assets/hardware/measured/H100-SXM5-80GB-2026-11-22.json\"}, \"results\": \"$root/docs/results/h100-perf-bench.json\"")" --screenshot-panel plots
for tab in bench-time bench-tflops bench-memory bench-speedup bench; do
  shot "plot-$tab" "$(variant lab-report-h100 "$tab" "\"tab\": \"$tab\", \"plots_large\": true, \"results\": \"$root/docs/results/h100-labs.json\"")" --screenshot-panel plots
done
# The heatmap needs a whole batch × N grid: the H200 lab grid (7 batches × 5 N).
shot plot-bench-heatmap "$(variant lab-report-h100 bench-heatmap "\"tab\": \"bench-heatmap\", \"plots_large\": true, \"results\": \"$root/docs/results/labs/labs-flashlab.json\"")" --screenshot-panel plots
shot concepts "$(variant lecture-fa1-vs-fa2 concepts '"concepts": true')" --screenshot-panel concepts
# A projector: 1920×1080 at UI scale 2 (the hall layout: one view on the stage), the tiling view, then the plots.
xvfb-run -a -s "-screen 0 1920x1080x24" "$exe" gui --frames 12 --scenario "$sc/lecture-fa1-vs-fa2.json" --ui-scale 2 \
  --width 1920 --height 1080 --screenshot "$out/scale-2.png"
echo docs/images/scale-2.png
xvfb-run -a -s "-screen 0 1920x1080x24" "$exe" gui --frames 12 \
  --scenario "$(variant lecture-fa1-vs-fa2 scale-2-plots '"tab": "roofline", "plots_large": true')" --ui-scale 2 \
  --width 1920 --height 1080 --screenshot "$out/scale-2-plots.png"
echo docs/images/scale-2-plots.png
xvfb-run -a -s "-screen 0 1920x1080x24" "$exe" gui --frames 12 \
  --scenario "$(variant ring-layouts scale-2-ring-step '"ring_step_on_stage": true')" --ui-scale 2 \
  --width 1920 --height 1080 --screenshot "$out/scale-2-ring-step.png"
echo docs/images/scale-2-ring-step.png
shot invalid "$(variant lecture-fa1-vs-fa2 invalid '"problem": {"seq": "16x"}, "tiles": {"Br": 64, "Bc": "0"}')"
# The multi-GPU view: the two layouts on one time axis, the step-through, and
# measured ring results beside the simulation: 4 H200s over NVLink (the file
# opens on its first fused run of more than one GPU), two virtual GPUs of one H100.
shot multi-gpu-timeline "$sc/ring-layouts.json"
shot multi-gpu-step "$(variant ring-layouts multi-gpu-step '"ring": {"gpus": 4, "layout": "contiguous", "compare_layouts": false, "step": 1}')" --screenshot-panel ring-step
# ring_shot NAME RESULTS: `flashlab gui --ring-results RESULTS`, as a user opens it from the
# repository's root (the path in the view reads docs/results/ring/...).
ring_shot() {
  (cd "$root" && xvfb-run -a -s "-screen 0 1600x1000x24" "$exe" gui --frames 20 --ring-results "docs/results/ring/$2" \
    --screenshot "$out/$1.png")
  echo "docs/images/$1.png"
}
ring_shot multi-gpu-measured h200x4-ring-host-calls.json
ring_shot multi-gpu-virtual h100-virtual-gpus.json

# The ring's charts of the measured files: scaling efficiency against the
# tokens per GPU (both step modes), where each pass's time goes (fused).
ring_chart() {
  "$exe" ring --results "$root/docs/results/ring/$1" --out "$out/$2.png" "${@:3}" >/dev/null
  echo "docs/images/$2.png"
}
ring_chart h200x4-ring.json ring-scaling-4gpu --chart ring-scaling
ring_chart h200x4-ring.json ring-time-4gpu-fwd --chart ring-time --steps fused --pass fwd
ring_chart h200x4-ring.json ring-time-4gpu-bwd --chart ring-time --steps fused --pass bwd
ring_chart h200x2-ring-homecoming.json ring-scaling-2gpu --chart ring-scaling

# Every shipped lecture's scenes as the hall sees them: 1920×1080, UI scale 2
# (docs/images/scenes/LECTURE-N.png), each scene entered as the clicker does.
mkdir -p "$out/scenes"
for f in "$sc"/*.json; do
  name=$(basename "$f" .json)
  grep -q '"scenes"' "$f" || continue
  n=$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["scenes"]))' "$f")
  python3 - "$f" "$tmp/$name.json" "$out/scenes" "$name" <<'PY'
import json, os, sys
src, dst, shots, name = sys.argv[1:5]
d = os.path.dirname(os.path.abspath(src))
j = json.load(open(src))
fix = lambda p: p if os.path.isabs(p) else os.path.normpath(os.path.join(d, p))
if "results" in j: j["results"] = fix(j["results"])
if isinstance(j.get("hardware"), dict): j["hardware"]["file"] = fix(j["hardware"]["file"])
for s in j["scenes"]:
    if "results" in s.get("state", {}): s["state"]["results"] = fix(s["state"]["results"])
j["export_dir"] = shots
j["script"] = []
for k in range(len(j["scenes"])):
    j["script"].append({"frame": 3 + 3 * k, "scene": k + 1})
    j["script"].append({"frame": 4 + 3 * k, "screenshot": "%s-%d.png" % (name, k + 1)})
json.dump(j, open(dst, "w"))
PY
  xvfb-run -a -s "-screen 0 1920x1080x24" "$exe" gui --frames $((6 + 3 * n)) --width 1920 --height 1080 --ui-scale 2 \
    --scenario "$tmp/$name.json" > /dev/null
  echo "docs/images/scenes/$name-1..$n.png"
done
