#!/usr/bin/env bash
# Everything the tests need is installed first; then native, unit and integration tests.
#   ./run_tests.sh            all tests (integration needs root)
#   ./run_tests.sh --unit     only the tests that need nothing (no root, no network)
set -euo pipefail
cd "$(dirname "$0")"

unit_only=no
[[ ${1:-} == --unit ]] && unit_only=yes

if [[ $unit_only == no ]]; then
  ./setup/install.sh
fi

echo "== native unit tests (ctest)"
if [[ $unit_only == yes ]]; then
  cmake -S native -B build/native -DNETREPRO_TESTS=ON >/dev/null && make -C build/native -j"$(nproc)" --no-print-directory >/dev/null
fi
(cd build/native && ctest --output-on-failure)

echo "== layers: no module imports a layer above it"
/usr/bin/python3 -m pytest -q -p no:cacheprovider tests/unit/test_layers.py

echo "== lint (flake8, .flake8) and types (mypy, mypy.ini)"
for tool in flake8 mypy; do
  command -v $tool >/dev/null || { echo "$tool is missing: ./setup/install.sh installs it" >&2; exit 1; }
done
flake8
mypy

echo "== python unit tests"
/usr/bin/python3 -m pytest -q -m "not integration" tests

if [[ $unit_only == no ]]; then
  echo "== python unit tests without Mininet (a plain virtual environment, packages from PyPI)"
  tests/unit-venv.sh

  echo "== integration tests (real Mininet networks)"
  /usr/bin/python3 -m pytest -q -m integration tests
fi
