#!/usr/bin/env bash
# Installs what dtc needs (scripts/setup.sh), configures once and builds
# build/bin/dtc and build/bin/dtc-opt with Ninja, lld and ccache.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
if [ ! -f build/build.ninja ]; then
  cmake --preset default >/dev/null
fi
cmake --build --preset default
