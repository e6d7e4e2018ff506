#!/usr/bin/env bash
# Installs what FlashLab needs from Debian 12's archive, and nothing that is
# already there. Idempotent; run as root (or with sudo available).
set -euo pipefail

packages=(
  g++ make cmake pkg-config git
  nlohmann-json3-dev libcli11-dev libeigen3-dev catch2 libbenchmark-dev
  libimgui-dev libstb-dev libglfw3-dev libgl-dev libcairo2-dev fonts-dejavu-core
  xvfb xauth libgl1-mesa-dri ccache
  python3
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#packages[@]} packages present"
  exit 0
fi

echo "install-deps: installing ${missing[*]}"
sudo=""
if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
