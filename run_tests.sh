#!/usr/bin/env bash
# Everything the tests need is installed first; then native, unit and integration tests.
#   ./run_tests.sh            all tests (integration needs root)
#   ./run_tests.sh --unit     only the tests that need nothing (no root, no network)
#   ./run_tests.sh --distro RELEASE   all tests, then the checks in a fresh Debian RELEASE
#                             tree (setup/try-distro.sh RELEASE --check); CI (CI=true) does
#                             this for trixie, Debian 13
set -euo pipefail
cd "$(dirname "$0")"

unit_only=no
distro=""
[[ ${CI:-} == true ]] && distro=trixie
case ${1:-} in
  --unit) unit_only=yes ;;
  --distro) distro=${2:?--distro takes a release: bookworm or trixie} ;;
  "") ;;
  *) echo "run_tests: unknown option $1 (--unit, --distro RELEASE)" >&2; exit 2 ;;
esac

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

if [[ $unit_only == no && -n $distro ]]; then
  echo "== in a fresh Debian $distro tree: setup, doctor, unit tests, flake8 and mypy, the quick" \
       "contest-warmup-a and prr-fig2 (setup/try-distro.sh)"
  # The release's tree and its downloaded packages are kept for the machine, not the clone
  # (CI clones afresh each time); each is used only while it matches its stamp.
  NETREPRO_DISTROS=${NETREPRO_DISTROS:-/var/cache/netrepro/distros} \
    ./setup/try-distro.sh "$distro" --check
fi
