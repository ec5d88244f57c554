#!/usr/bin/env bash
# Installs the Debian packages listed in scripts/debian-packages.txt that are missing, and with
# --test also those of scripts/debian-test-packages.txt (./test.sh passes it).
# A no-op when all are present. Uses sudo when not run as root.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
lists=("$here/debian-packages.txt")
if [ "${1:-}" = "--test" ]; then lists+=("$here/debian-test-packages.txt"); fi
mapfile -t wanted < <(cat "${lists[@]}" | grep -v '^\s*#' | sed '/^\s*$/d')
missing=()
for p in "${wanted[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi
echo "Installing missing packages: ${missing[*]}"
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
