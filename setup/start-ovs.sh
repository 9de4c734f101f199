#!/usr/bin/env bash
# Start Open vSwitch without systemd when it is not running.
# The kernel datapath is used where the openvswitch module exists; otherwise
# ovs-vswitchd still runs and bridges must use the userspace (netdev) datapath.
set -euo pipefail

if ovs-vsctl --timeout=3 show >/dev/null 2>&1; then
  echo "ovs: already running"
  exit 0
fi
ctl=/usr/share/openvswitch/scripts/ovs-ctl
if [[ ! -x $ctl ]]; then
  echo "ovs: $ctl not found; install openvswitch-switch (./setup/install.sh)" >&2
  exit 1
fi
# The daemons outlive this script, so they must not keep what the caller had open: a lock
# it holds (flock) would stay held, and a pipe's write end would never reach end of file.
close_inherited() {
  local fd
  for fd in /proc/$BASHPID/fd/*; do
    fd=${fd##*/}
    if (( fd > 2 && fd != 255 )); then eval "exec $fd>&-" 2>/dev/null || true; fi
  done
}
(
  close_inherited
  "$ctl" --no-ovs-vswitchd --system-id=random start
  if modprobe -n openvswitch >/dev/null 2>&1 || [[ -d /sys/module/openvswitch ]]; then
    "$ctl" --no-ovsdb-server start
    echo "ovs: started (kernel datapath)"
  else
    # No kernel module on this machine: run the daemon for the userspace datapath.
    ovs-vswitchd --pidfile --detach --log-file -vconsole:off unix:/var/run/openvswitch/db.sock
    echo "ovs: started (userspace datapath: the openvswitch kernel module is not available)"
  fi
)
ovs-vsctl --timeout=5 show >/dev/null
