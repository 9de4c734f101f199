#!/usr/bin/env bash
# Install everything netrepro needs, from distribution packages, and build native/.
# Idempotent: a second run with everything in place only checks and rebuilds incrementally.
#   ./setup/install.sh [--traces-dir DIR] [--programs-only]     (or NETREPRO_TRACES=DIR)
#   --programs-only: build what the experiments run, not the native unit tests (a third faster),
#                    and leave out the test tools (mypy, flake8, python3-venv)
#   --pox-dir DIR (or NETREPRO_POX=DIR): where the POX tarball or a POX checkout is
#   --dry-run [--os-release FILE]: print the packages setup would install here (or on the
#                    release FILE describes, from its recorded facts); no root, nothing changed
set -euo pipefail
cd "$(dirname "$0")/.."

traces_dir="${NETREPRO_TRACES:-}"
tests=ON
dry_run=no
plan_args=()
while [[ $# -gt 0 ]]; do
  case $1 in
    --traces-dir) traces_dir=$2; shift 2 ;;
    --programs-only) tests=OFF; plan_args+=(--programs-only); shift ;;
    --pox-dir) export NETREPRO_POX=$2; shift 2 ;;
    --dry-run) dry_run=yes; shift ;;
    --os-release) plan_args+=(--os-release "$2"); shift 2 ;;
    -h|--help) sed -n '2,10p' "$0"; exit 0 ;;
    *) echo "setup: unknown option $1" >&2; exit 2 ;;
  esac
done

# Which packages, decided from the release's facts (setup/package_plan.py, unit-tested):
# bpftool where it is only virtual, python3-setuptools on Python 3.12+, universe on Ubuntu.
plan() { /usr/bin/python3 setup/package_plan.py "${plan_args[@]}" "$@"; }

if [[ $dry_run == yes ]]; then
  # Prints the plan; needs no root and changes nothing.
  [[ -x /usr/bin/python3 ]] || {
    echo "setup: --dry-run needs /usr/bin/python3 (apt-get install python3)" >&2; exit 2; }
  plan --print report
  exit $?
fi
if [[ " ${plan_args[*]} " == *" --os-release "* ]]; then
  echo "setup: --os-release is for --dry-run: setup installs for this machine" >&2; exit 2
fi

if [[ $EUID -ne 0 ]]; then
  echo "setup: must run as root (sudo ./setup/install.sh)" >&2
  exit 3
fi
export DEBIAN_FRONTEND=noninteractive

updated=no
if [[ ! -x /usr/bin/python3 ]]; then
  # The plan is made by a Python module, so Python comes first (a minimal image lacks it).
  echo "setup: installing python3 first (setup's package plan is written in it)"
  apt-get update -q; updated=yes
  apt-get install -y -q --no-install-recommends python3
fi

# The plan from the package lists as they are; when something is missing, from fresh ones.
said=$(mktemp)
status=0
plan_out=$(plan --print missing 2>"$said") || status=$?
if [[ $status -ne 0 || -n $plan_out ]] && [[ $updated == no ]]; then
  apt-get update -q; updated=yes
  status=0
  plan_out=$(plan --print missing 2>"$said") || status=$?
fi
cat "$said" >&2; rm -f "$said"
if [[ $status -ne 0 ]]; then
  echo "setup: stopped: the errors above name what is missing (./setup/install.sh --dry-run" \
       "prints the whole plan)" >&2
  exit 1
fi
missing=() required=()
while read -r name kind; do
  [[ -n $name ]] || continue
  missing+=("$name")
  [[ $kind == required ]] && required+=("$name")
done <<<"$plan_out"

if [[ ${#missing[@]} -gt 0 ]]; then
  echo "setup: installing ${missing[*]}"
  if ! apt-get install -y -q --no-install-recommends "${missing[@]}"; then
    # Install one by one and report.
    for p in "${missing[@]}"; do
      if ! apt-get install -y -q --no-install-recommends "$p"; then
        if [[ " ${required[*]} " == *" $p "* ]]; then
          echo "setup: required package $p could not be installed" >&2; exit 1
        fi
        echo "setup: warning: optional package $p could not be installed" >&2
      fi
    done
  fi
else
  echo "setup: all packages present"
fi

echo "setup: building native/"
bpf=ON
# `bpftool version`, not its presence: Ubuntu's /usr/sbin/bpftool is a wrapper that fails
# when the running kernel's linux-tools package is missing.
if ! command -v clang >/dev/null || ! bpftool version >/dev/null 2>&1 ||
   [[ ! -e /sys/kernel/btf/vmlinux ]]; then
  # Without them the eBPF congestion controls cannot be built; runs needing them will say so.
  echo "setup: warning: clang, a working bpftool or kernel BTF missing: eBPF congestion" \
       "controls not built" >&2
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
