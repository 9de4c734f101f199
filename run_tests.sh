#!/usr/bin/env bash
# Everything the tests need is installed first; then native, unit and integration tests.
#   ./run_tests.sh            all tests (integration needs root)
#   ./run_tests.sh --unit     only the tests that need nothing
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

echo "== python unit tests"
/usr/bin/python3 -m pytest -q -m "not integration" tests

if [[ $unit_only == no ]]; then
  echo "== integration tests (real Mininet networks)"
  /usr/bin/python3 -m pytest -q -m integration tests
fi
