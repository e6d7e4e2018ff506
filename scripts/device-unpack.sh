#!/usr/bin/env bash
# Runs ON the GPU machine, first thing in every script that runs build-device/bin's
# binaries: scripts/device-build.sh sends them xz-compressed (five static binaries
# take about 95 MiB, the carry limit is 64); each NAME.xz becomes NAME, once.
set -euo pipefail
# Only where there is a GPU: unpacked here, they would travel at full size.
command -v nvidia-smi > /dev/null || exit 0
BIN=$(cd "$(dirname "$0")/.." && pwd)/build-device/bin
for f in "$BIN"/*.xz; do
  [ -e "$f" ] || continue
  xz -dc "$f" > "${f%.xz}.part" && chmod +x "${f%.xz}.part" && mv "${f%.xz}.part" "${f%.xz}" && rm -f "$f"
done
