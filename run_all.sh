#!/usr/bin/env bash
# The full reproduction: installs what is missing, then runs every experiment.
#   ./run_all.sh [--quick] [--jobs N] [--force]
set -euo pipefail
cd "$(dirname "$0")"
./setup/install.sh --programs-only  # the native unit tests are ./run_tests.sh's
exec ./repro run all "$@"
