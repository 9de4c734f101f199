#!/usr/bin/env bash
# Install everything netrepro needs, from distribution packages, and build native/.
# Idempotent: a second run with everything in place only checks and rebuilds incrementally.
#   ./setup/install.sh [--traces-dir DIR] [--programs-only]     (or NETREPRO_TRACES=DIR)
#   --programs-only: build what the experiments run, not the native unit tests (a third faster),
#                    and leave out the test tools (mypy, flake8, python3-venv)
#   --pox-dir DIR (or NETREPRO_POX=DIR): where the POX tarball or a POX checkout is
set -euo pipefail
cd "$(dirname "$0")/.."

traces_dir="${NETREPRO_TRACES:-}"
tests=ON
while [[ $# -gt 0 ]]; do
  case $1 in
    --traces-dir) traces_dir=$2; shift 2 ;;
    --programs-only) tests=OFF; shift ;;
    --pox-dir) export NETREPRO_POX=$2; shift 2 ;;
    -h|--help) sed -n '2,6p' "$0"; exit 0 ;;
    *) echo "setup: unknown option $1" >&2; exit 2 ;;
  esac
done

if [[ $EUID -ne 0 ]]; then
  echo "setup: must run as root (sudo ./setup/install.sh)" >&2
  exit 3
fi

# Required: the suite cannot run without these.
required=(mininet iperf3 iputils-ping ethtool iproute2 tcpdump cmake g++ make libgtest-dev
          python3 python3-numpy python3-matplotlib python3-dpkt python3-pytest
          python3-jinja2 python3-rich bubblewrap)
# Optional: eBPF congestion controls, the PRR controller, Open vSwitch.
optional=(clang llvm libbpf-dev bpftool python3-os-ken openvswitch-switch)
# Optional: runs spread over machines (`./repro run --cluster`, `./repro worker`; docs/cluster.md).
optional+=(python3-distributed)
# For the tests (run_tests.sh): type checks, lint, the unit tests' plain virtual environment.
[[ $tests == ON ]] && required+=(mypy flake8 python3-venv)
# Test-only (not with --programs-only): the report's test in headless Chromium.
if [[ $tests == ON ]]; then optional+=(python3-selenium); fi
# Debian ships chromium and chromium-driver as debs. On Ubuntu (20.04 on) both names are only
# virtual, provided by chromium-browser and chromium-chromedriver: transitional packages that
# install the chromium snap (snapd and the Snap Store needed), the driver a shell shim for
# /snap/bin/chromium.chromedriver; a snap browser has a private /tmp and reads little outside
# the home folder, so it cannot open the test's report. They are installed only as debs.
browser=(); [[ $tests == ON ]] && browser=(chromium chromium-driver)

installed() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"; }
missing=(); for p in "${required[@]}" "${optional[@]}"; do installed "$p" || missing+=("$p"); done

updated=no
is_deb() { apt-cache show --no-all-versions "$1" 2>/dev/null | grep -x "Package: $1" >/dev/null; }
for p in "${browser[@]}"; do
  installed "$p" && continue
  if [[ $updated == no && -z $(apt-cache policy "$p" 2>/dev/null) ]]; then
    apt-get update -q; updated=yes  # the package lists know nothing of it yet
  fi
  if is_deb "$p"; then missing+=("$p"); else
    echo "setup: warning: $p is no deb here (on Ubuntu only the chromium snap's transitional" \
         "package provides it): the report's browser test cannot run (README, Developing)" >&2
  fi
done

if [[ ${#missing[@]} -gt 0 ]]; then
  echo "setup: installing ${missing[*]}"
  [[ $updated == yes ]] || apt-get update -q
  export DEBIAN_FRONTEND=noninteractive
  if ! apt-get install -y -q --no-install-recommends "${missing[@]}"; then
    # Some optional names differ between releases: install one by one and report.
    for p in "${missing[@]}"; do
      if ! apt-get install -y -q --no-install-recommends "$p"; then
        if [[ " ${required[*]} " == *" $p "* ]]; then
          echo "setup: required package $p could not be installed" >&2; exit 1
        fi
        echo "setup: warning: optional package $p is not available here" >&2
      fi
    done
  fi
else
  echo "setup: all packages present"
fi

echo "setup: building native/"
bpf=ON
if ! command -v clang >/dev/null || ! command -v bpftool >/dev/null || [[ ! -e /sys/kernel/btf/vmlinux ]]; then
  # Without them the eBPF congestion controls cannot be built; runs needing them will say so.
  echo "setup: warning: clang, bpftool or kernel BTF missing: eBPF congestion controls not built" >&2
  bpf=OFF
fi
cmake -S native -B build/native -DCMAKE_BUILD_TYPE=RelWithDebInfo -DNETREPRO_BPF=$bpf \
  -DNETREPRO_TESTS=$tests >/dev/null
make -C build/native -j"$(nproc)" --no-print-directory

# Each submitted contest controller is built and run in a box of its own (schemes/submission/box.py,
# bubblewrap), as a user no other box has at the same time: a pool of unprivileged system
# users, 13 per CPU (the default runs side by side, twice over: a run's box may meet a
# build's), at least 16 and at most 256.
box_users=$(( $(nproc) * 13 )); (( box_users < 16 )) && box_users=16
(( box_users > 256 )) && box_users=256
for (( i = 0; i < box_users; i++ )); do
  name=$(printf 'netrepro-box-%02d' "$i")
  getent passwd "$name" >/dev/null ||
    useradd --system --user-group --no-create-home --home-dir /nonexistent \
      --shell /usr/sbin/nologin "$name"
done

# The tcp:tcp_probe tracepoint lives in tracefs, which a minimal VM may not mount.
if [[ ! -d /sys/kernel/tracing/events ]]; then
  mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null || echo "setup: warning: cannot mount tracefs" >&2
fi

if command -v ovs-vsctl >/dev/null; then
  ./setup/start-ovs.sh || echo "setup: warning: Open vSwitch did not start (only the PRR experiment needs it)" >&2
fi

# POX (the PRR experiment's classic controller): no registry serves it; without it, runs
# use os-ken under --controller auto and a run asking for pox fails naming this fix.
/usr/bin/python3 -m controllers.pox_install ||
  echo "setup: warning: POX not installed (--controller pox unavailable; auto uses os-ken)" >&2

echo "setup: traces"
dir_args=()
[[ -n $traces_dir ]] && dir_args=(--dir "$traces_dir")
# Every known trace is tried (downloaded when missing); only those the experiments
# need are fatal. The others are reported, and whatever needs them says so.
/usr/bin/python3 -m core.traces prepare "${dir_args[@]}" ||
  echo "setup: warning: some optional traces are missing (listed above)" >&2
mapfile -t required < <(/usr/bin/python3 ./repro _required-traces)
/usr/bin/python3 -m core.traces prepare --offline "${dir_args[@]}" "${required[@]}" >/dev/null || {
  echo "setup: traces the experiments need are missing: ${required[*]}" >&2
  echo "setup: give a directory holding them with --traces-dir DIR or NETREPRO_TRACES=DIR" >&2
  exit 1
}
echo "setup: done; ./repro doctor checks everything"
