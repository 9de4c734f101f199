"""Receive packet steering (RPS): which CPUs process the frames an interface receives.

A frame written into one end of a veth pair is received by the other end inside the
writer's system call, and on the writer's CPU unless RPS sends it to another. For the link
emulator this is the difference between forwarding a frame and running the receiving host's
whole IP and TCP stack (and the bridge, and the sender's reply) before its next departure.

The setting lives in sysfs, which shows the devices of the network namespace that mounted it:
where the host's /sys does not show its interface, it is written from a private mount
namespace with the host's sysfs mounted there.
"""
from __future__ import annotations

import shlex
from pathlib import Path
from typing import Iterable, Protocol, Sequence

SYSFS_CLASS_NET = Path("/sys/class/net")


class ReceiveSteeringError(RuntimeError):
    pass


class RunsCommands(Protocol):
    def cmd(self, *args: str) -> str: ...


def cpu_mask(cpus: Iterable[int]) -> str:
    """The kernel's CPU bitmap text: 32-bit hex words, most significant first, commas between."""
    bits = 0
    for cpu in cpus:
        if cpu < 0:
            raise ValueError(f"CPU {cpu}")
        bits |= 1 << cpu
    if bits == 0:
        raise ValueError("no CPU")
    words = []
    while bits:
        words.append(f"{bits & 0xFFFFFFFF:08x}")
        bits >>= 32
    return ",".join(reversed(words))


def mask_cpus(text: str) -> set[int]:
    """The CPUs of a bitmap as cpu_mask writes it and sysfs prints it."""
    bits = int(text.strip().replace(",", "") or "0", 16)
    return {cpu for cpu in range(bits.bit_length()) if bits >> cpu & 1}


def available() -> str | None:
    """None when this kernel steers received packets (CONFIG_RPS), else why not."""
    if not any(SYSFS_CLASS_NET.glob("*/queues/rx-0/rps_cpus")):
        return "this kernel has no receive packet steering (no queues/rx-0/rps_cpus in sysfs)"
    return None


def _in_host_sysfs(node: RunsCommands, setting: str, then: str) -> str:
    """Run `then` in a private mount namespace of the host's where `setting` is visible: a
    host whose /sys already shows its own namespace's devices needs no mount (and mounting
    the same sysfs again on it is refused)."""
    script = f"{{ test -e {setting} || mount -t sysfs netrepro-sysfs /sys; }} && {then}"
    return node.cmd("unshare", "-m", "sh", "-c", shlex.quote(script))


def _said(out: str) -> dict[str, str]:
    """The NAME=VALUE lines a steering script printed (the shell's other output left out)."""
    return dict(line.strip().split("=", 1) for line in out.splitlines() if "=" in line)


def steer_receive(node: RunsCommands, intf: str, cpus: Iterable[int]) -> set[int]:
    """Send the frames `intf` (in `node`'s namespace) receives to `cpus` (none: steering off,
    frames processed where they arrive); returns the CPUs the kernel then reports, raising
    when they are not the ones asked for."""
    wanted = set(cpus)
    mask = cpu_mask(wanted) if wanted else "0"
    setting = f"/sys/class/net/{intf}/queues/rx-0/rps_cpus"
    out = _in_host_sysfs(node, setting,
                         f"echo {mask} > {setting} && echo rps=$(cat {setting}) "
                         f"&& echo sysfs-index=$(cat /sys/class/net/{intf}/ifindex) "
                         f"&& echo link-index=$(ip -o link show dev {intf} | cut -d: -f1)")
    said = _said(out)
    if "rps" not in said or "link-index" not in said:
        raise ReceiveSteeringError(f"cannot steer {intf}'s received frames to CPUs "
                                   f"{sorted(wanted)}: {out.strip()!r}")
    if said.get("sysfs-index") != said["link-index"]:  # the same name in another namespace
        raise ReceiveSteeringError(f"{intf}: sysfs shows interface {said.get('sysfs-index')}, "
                                   f"the host's is {said['link-index']}")
    got = mask_cpus(said["rps"])
    if got != wanted:
        raise ReceiveSteeringError(f"{intf}: asked to steer received frames to CPUs "
                                   f"{sorted(wanted)}, the kernel reports {sorted(got)}")
    return got


def steer_all(targets: Sequence[tuple[RunsCommands, str]], cpus: Iterable[int]) -> None:
    """Steer every (host, interface) of `targets` to `cpus`, or none: when one cannot be,
    those already steered are turned off again before the error is raised, so a path is
    never left half steered while its record says it was not placed."""
    wanted = set(cpus)
    done: list[tuple[RunsCommands, str]] = []
    try:
        for node, intf in targets:
            steer_receive(node, intf, wanted)
            done.append((node, intf))
    except ReceiveSteeringError as e:
        stuck = []
        for node, intf in done:
            try:
                steer_receive(node, intf, ())
            except ReceiveSteeringError:
                stuck.append(intf)
        if stuck:
            raise ReceiveSteeringError(f"{e}; and {', '.join(stuck)} could not be turned back "
                                       f"off (still steered to CPUs {sorted(wanted)})") from e
        raise


def receive_cpus(node: RunsCommands, intf: str) -> set[int]:
    """The CPUs `intf` (in `node`'s namespace) steers its received frames to (none: RPS off,
    they are processed where they arrive)."""
    setting = f"/sys/class/net/{intf}/queues/rx-0/rps_cpus"
    out = _in_host_sysfs(node, setting, f"echo rps=$(cat {setting})")
    said = _said(out)
    if "rps" not in said:
        raise ReceiveSteeringError(f"cannot read {intf}'s receive steering: {out.strip()!r}")
    return mask_cpus(said["rps"])
