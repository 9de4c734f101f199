#!/usr/bin/env bash
# The unit tests in a plain virtual environment holding only the Python packages
# setup installs (numpy, scipy, matplotlib, dpkt, pytest, jinja2, markdown, rich), from
# PyPI: no system site-packages, so no Mininet. Shows that tests/unit needs nothing else.
#   tests/unit-venv.sh [pytest args...]      (the environment is kept in build/unit-venv)
set -euo pipefail
cd "$(dirname "$0")/.."
venv=build/unit-venv
packages=(numpy scipy matplotlib dpkt pytest jinja2 markdown rich)
if [[ ! -x $venv/bin/python ]]; then
  /usr/bin/python3 -m venv "$venv"   # no --system-site-packages, on purpose
  "$venv/bin/pip" install -q "${packages[@]}"
fi
if "$venv/bin/python" -c "import mininet" 2>/dev/null; then
  echo "unit-venv: mininet is importable in $venv: not the environment this check needs" >&2
  exit 1
fi
exec "$venv/bin/python" -m pytest -q -p no:cacheprovider -m "not integration" tests/unit "$@"
