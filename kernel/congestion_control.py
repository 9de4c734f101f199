"""Which implementation serves a requested TCP congestion control.

A variant is served, in this order, by the kernel (built in, or a module that is
already loaded), by loading its kernel module, or by netrepro's own eBPF
struct_ops (native/bpf/<name>.bpf.c, registered as `bpf_<name>`). Nothing is
ever silently substituted: when no provider exists, `CcUnavailable` says what
is available and how to get the missing variant.

The fast-recovery variants (`rh_cubic`, `3517_reno`, `prr_cubic`, ...: a
recovery on top of a base CC, all from native/bpf/recovery.bpf.c) exist only
as eBPF and are registered as `bpf_<recovery>_<base>`; kernel/recovery.py
maps a (cc, recovery) request onto them. They implement `cong_control`, whose
arguments changed in Linux 6.10, so each is built in both shapes
(`<name>.args4.bpf.o`, `<name>.args2.bpf.o`) and the one the running kernel's
BTF describes is registered (kernel/cong_control_shape.py).

eBPF registrations are global to the machine while runs are separate
processes, so registration is shared: under an flock'ed lock file, each
registration has a record and one holder file per process (named by PID, with
the process start time against PID reuse). The last holder to leave
unregisters; registrations whose holders all died are cleaned by the next
`resolve()` or by `cleanup_stale()`. Only struct_ops named in our state
directory are ever unregistered.

Whether a name is registered is read from the kernel's list of available
congestion controls, not from bpftool's list of struct_ops maps: an
unregistered map lingers there while sockets still use it (e.g. orphaned
connections of a torn-down namespace, which can take minutes to die), so
the same name can show a lingering id beside a live one.
"""
from __future__ import annotations

import hashlib
import json
import logging
import os
import re
import shutil
import subprocess
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import ContextManager, Iterable, Iterator, Sequence

from core.errors import Unavailable
from core.file_lock import exclusive_lock
from core.processes import process_state
from core.paths import ProjectPaths
from kernel.cong_control_shape import (STRUCT_OPS_VALUE, BtfShapeError, CongControlShape,
                                       KernelCcBtf, parse_kernel_cc_btf)

log = logging.getLogger(__name__)

# The native programs this module starts (the eBPF congestion controls it registers):
# hashed into the id of every run that imports it (core/code_identity.py).
NATIVE = ("bpf",)

REPO_ROOT = Path(__file__).resolve().parent.parent
EBPF_VARIANTS = ("vegas", "bic", "hybla", "dctcp")
# Fast-recovery variants: one source (recovery.bpf.c), one object per recovery and base CC;
# served by eBPF only (the kernel has nothing of these names).
RECOVERY_SOURCE = "recovery.bpf.c"
RECOVERY_VARIANTS = tuple(f"{recovery}_{base}" for recovery in ("rh", "3517", "prr")
                          for base in ("reno", "cubic"))
ALL_EBPF_VARIANTS = EBPF_VARIANTS + RECOVERY_VARIANTS
IMPLS = ("auto", "kernel", "ebpf")
EBPF_PREFIX = "bpf_"
AVAILABLE_PATH = Path("/proc/sys/net/ipv4/tcp_available_congestion_control")
KERNEL_BTF = Path("/sys/kernel/btf/vmlinux")
_NAME_RE = re.compile(r"^[a-z0-9_]{1,15}$")  # TCP_CA_NAME_MAX is 16 with the NUL
_BPFTOOL_OUTPUT_LINES = 60


class CcUnavailable(Unavailable):
    """No provider can serve the requested congestion control (the message says why)."""


@dataclass(frozen=True)
class CcResolution:
    requested: str  # what the run asked for, e.g. "vegas"
    kernel_name: str  # what sockets must use (iperf3 -C), e.g. "bpf_vegas"
    provider: str  # "builtin" | "module" | "ebpf"
    source_sha256: str | None  # eBPF only: sha256 of native/bpf/<name>.bpf.c
    detail: str  # one human line: how it was provided
    shape: CongControlShape | None = None  # the recoveries: the cong_control shape built for


@dataclass(frozen=True)
class CommandResult:
    argv: tuple[str, ...]
    returncode: int
    stdout: str
    stderr: str

    def output(self) -> str:
        """stdout and stderr, trimmed to the last lines (verifier logs are long)."""
        text = "\n".join(part.strip() for part in (self.stdout, self.stderr) if part.strip())
        lines = text.splitlines()
        if len(lines) > _BPFTOOL_OUTPUT_LINES:
            lines = [f"[... {len(lines) - _BPFTOOL_OUTPUT_LINES} earlier lines ...]"] + \
                lines[-_BPFTOOL_OUTPUT_LINES:]
        return "\n".join(lines) or "(no output)"


class SystemLayer:
    """Everything the resolver asks of the machine; tests replace it with a fake."""

    def run(self, argv: Sequence[str]) -> CommandResult:
        try:
            done = subprocess.run(list(argv), capture_output=True, text=True, timeout=60,
                                  check=False)
        except FileNotFoundError:
            return CommandResult(tuple(argv), 127, "", f"{argv[0]}: command not found")
        return CommandResult(tuple(argv), done.returncode, done.stdout, done.stderr)

    def kernel_available(self) -> list[str]:
        return AVAILABLE_PATH.read_text().split()

    def module_loaded(self, module: str) -> bool:
        # Only loadable modules have an initstate; built-in code never does.
        return Path("/sys/module", module, "initstate").exists()

    def module_installed(self, module: str) -> bool:
        return self.run(["modinfo", "-F", "filename", module]).returncode == 0

    def which(self, program: str) -> str | None:
        # bpftool and modprobe live in sbin, which a user's PATH may lack.
        path = os.pathsep.join([os.environ.get("PATH", ""), "/usr/sbin", "/sbin"])
        return shutil.which(program, path=path)

    def euid(self) -> int:
        return os.geteuid()

    def btf_present(self) -> bool:
        return KERNEL_BTF.exists()

    def kernel_btf_raw(self) -> CommandResult:
        """The running kernel's BTF as text, one line per type (several MB)."""
        return self.run(["bpftool", "btf", "dump", "file", str(KERNEL_BTF), "format", "raw"])

    def pid(self) -> int:
        return os.getpid()

    def process_start_time(self, pid: int) -> str | None:
        """The process's start time (clock ticks after boot), None if it is gone."""
        state = process_state(pid)
        return state.start_time if state else None


@dataclass(frozen=True)
class _Registration:
    """Our record of one struct_ops registration (state_dir/<kernel_name>/record.json)."""
    kernel_name: str
    state: str  # "registering" (bpftool may have run) | "registered"
    struct_ops_id: int | None
    source_sha256: str
    object_path: str

    def to_json(self) -> str:
        return json.dumps(asdict(self), indent=1)

    @staticmethod
    def from_json(text: str) -> "_Registration":
        return _Registration(**json.loads(text))


class CongestionControlResolver:
    def __init__(self, state_dir: Path | None = None, bpf_dir: Path | None = None,
                 source_dir: Path | None = None, system: SystemLayer | None = None) -> None:
        self.state_dir = state_dir or ProjectPaths().cc_state_dir
        self.bpf_dir = bpf_dir or REPO_ROOT / "build" / "native" / "bpf"
        self.source_dir = source_dir or REPO_ROOT / "native" / "bpf"
        self.system = system or SystemLayer()
        # The kernel does not change under a running process: its BTF is read once.
        self._kernel_cc: KernelCcBtf | BtfShapeError | None = None

    @classmethod
    def for_project(cls, paths: ProjectPaths, state_dir: Path | None = None
                    ) -> "CongestionControlResolver":
        """The resolver of a checkout: its built objects and sources, and the machine-wide
        registration records (`state_dir` only to clean records kept elsewhere)."""
        return cls(state_dir=state_dir or paths.cc_state_dir, bpf_dir=paths.build_dir / "bpf",
                   source_dir=paths.root / "native" / "bpf")

    # ---------------------------------------------------------------- public

    @contextmanager
    def resolve(self, requested: str, impl: str = "auto") -> Iterator[CcResolution]:
        """Provide `requested` for the duration of the with-block.

        impl: "auto" (kernel, then module, then eBPF), "kernel" (built-in or
        module only), "ebpf" (netrepro's struct_ops only). A request named
        "bpf_<x>" means <x> served by eBPF.
        """
        name, impl = self._normalise(requested, impl)
        notes: list[str] = []
        if name in RECOVERY_VARIANTS:
            if impl == "kernel":
                raise CcUnavailable(f"{requested!r} is one of netrepro's eBPF recoveries; the "
                                    "kernel has no code of that name, so impl='kernel' cannot "
                                    "serve it (use impl auto or ebpf)")
            impl = "ebpf"  # nothing to look for in the kernel
        if impl in ("auto", "kernel"):
            found = self._from_kernel(name, notes)
            if found is not None:
                yield CcResolution(requested, name, found[0], None, found[1])
                return
        if impl in ("auto", "ebpf") and name in ALL_EBPF_VARIANTS:
            problems = self._ebpf_problems(name)
            if problems:
                notes.append(f"eBPF {EBPF_PREFIX}{name} cannot be used: " + "; ".join(problems))
            else:
                with self._ebpf(name, requested, notes) as resolution:
                    yield resolution
                return
        raise CcUnavailable(self._unavailable_message(name, impl, notes))

    def available_variants(self, variants: Iterable[str]) -> dict[str, str | None]:
        """For each variant (the TCP scheme table's), the provider that would serve it
        (None: nothing).

        Reads only: no module is loaded and nothing is registered.
        """
        kernel = set(self._kernel_list())
        result: dict[str, str | None] = {}
        for name in variants:
            module = f"tcp_{name}"
            if name in kernel:
                result[name] = "module" if self.system.module_loaded(module) else "builtin"
            elif self.system.module_installed(module):
                result[name] = "module"
            elif name in EBPF_VARIANTS and not self._ebpf_problems(name):
                result[name] = "ebpf"
            else:
                result[name] = None
        return result

    def why_unavailable(self, name: str) -> str:
        """Why no provider serves the variant `name` here, in one line (reads only)."""
        reasons = [f"not in {AVAILABLE_PATH.name}", f"no kernel module tcp_{name}"]
        if name in ALL_EBPF_VARIANTS:
            problems = self._ebpf_problems(name)
            reasons.append("eBPF: " + ("; ".join(problems) if problems else "ready"))
        else:
            reasons.append("netrepro has no eBPF version")
        return ", ".join(reasons)

    def kernel_cc_btf(self) -> KernelCcBtf:
        """struct_ops support and the cong_control shape, from the running kernel's BTF
        (never from its version number). Raises BtfShapeError saying what is missing."""
        if self._kernel_cc is None:
            self._kernel_cc = self._read_kernel_cc_btf()
        if isinstance(self._kernel_cc, BtfShapeError):
            raise self._kernel_cc
        return self._kernel_cc

    def recovery_problems(self, name: str) -> list[str]:
        """What prevents registering the recovery variant bpf_<name> here; empty when
        nothing does (reads only)."""
        return self._ebpf_problems(name)

    def cleanup_stale(self) -> list[str]:
        """Unregister our registrations whose holders are all dead; say what was done."""
        if not self.state_dir.exists():
            return []
        with self._locked():
            return self._cleanup_stale_locked()

    # ------------------------------------------------------ kernel providers

    def _normalise(self, requested: str, impl: str) -> tuple[str, str]:
        if impl not in IMPLS:
            raise ValueError(f"impl must be one of {', '.join(IMPLS)}, not {impl!r}")
        name = requested.strip().lower()
        if name.startswith(EBPF_PREFIX) and name[len(EBPF_PREFIX):] in ALL_EBPF_VARIANTS:
            if impl == "kernel":
                raise CcUnavailable(f"{requested!r} names netrepro's eBPF implementation "
                                    "but impl='kernel' was forced; ask for "
                                    f"{name[len(EBPF_PREFIX):]!r} instead")
            return name[len(EBPF_PREFIX):], "ebpf"
        if not _NAME_RE.match(name):
            raise CcUnavailable(f"{requested!r} is not a congestion-control name "
                                "(expected 1-15 characters of a-z, 0-9, _)")
        return name, impl

    def _kernel_list(self) -> list[str]:
        try:
            return self.system.kernel_available()
        except OSError as e:
            log.warning("cannot read %s: %s", AVAILABLE_PATH, e)
            return []

    def _from_kernel(self, name: str, notes: list[str]) -> tuple[str, str] | None:
        """(provider, detail) when the kernel serves `name`, loading its module if needed."""
        module = f"tcp_{name}"
        if name in self._kernel_list():
            if self.system.module_loaded(module):
                return "module", f"kernel module {module} (already loaded)"
            return "builtin", "built into the kernel"
        # Never -q: when it fails, its own message is the useful part.
        result = self.system.run(["modprobe", module])
        if result.returncode != 0:
            notes.append(f"`modprobe {module}` failed (exit {result.returncode}): "
                         f"{result.output()}")
            return None
        if name in self._kernel_list():
            return "module", f"kernel module {module} (loaded by modprobe)"
        notes.append(f"`modprobe {module}` succeeded but {name} is still not in "
                     f"{AVAILABLE_PATH}")
        return None

    def _unavailable_message(self, name: str, impl: str, notes: list[str]) -> str:
        kernel = " ".join(self._kernel_list()) or "(unreadable)"
        ours = []
        for variant in EBPF_VARIANTS:
            problems = self._ebpf_problems(variant)
            ours.append(f"{variant} ({'ready' if not problems else problems[0]})")
        how = []
        if impl != "ebpf" and name not in RECOVERY_VARIANTS:
            how.append(f"load the kernel module tcp_{name}")
        if name in ALL_EBPF_VARIANTS:
            if impl == "kernel":
                how.append("allow netrepro's eBPF version (impl auto or ebpf)")
            else:
                try:
                    what = f"so {self._display(self._object(name))} exists"
                except BtfShapeError:
                    what = "(it builds both cong_control shapes)"
                how.append(f"build native/ {what} and register it as root")
        lines = [f"TCP congestion control {name!r} is not available (impl={impl})."]
        if impl == "ebpf" and name not in ALL_EBPF_VARIANTS:
            lines.append(f"netrepro has no eBPF implementation of {name}; "
                         f"its eBPF variants are: {', '.join(ALL_EBPF_VARIANTS)}.")
        lines += [f"The kernel offers: {kernel}.",
                  f"netrepro's eBPF variants: {', '.join(ours)}."]
        lines += notes
        if how:
            lines.append("To get it: " + ", or ".join(how) + ".")
        return "\n".join(lines)

    # --------------------------------------------------------- eBPF provider

    def _object(self, name: str) -> Path:
        """The object to register; a recovery's is the one of this kernel's cong_control
        shape (BtfShapeError when the kernel's BTF does not say)."""
        if name in RECOVERY_VARIANTS:
            return self.bpf_dir / f"{name}{self.kernel_cc_btf().shape.object_suffix}.bpf.o"
        return self.bpf_dir / f"{name}.bpf.o"

    def _read_kernel_cc_btf(self) -> KernelCcBtf | BtfShapeError:
        if not self.system.btf_present():
            return BtfShapeError(f"{KERNEL_BTF} is missing: this kernel was built without "
                                 "CONFIG_DEBUG_INFO_BTF, so neither struct_ops nor the shape "
                                 "of its cong_control can be known")
        if self.system.which("bpftool") is None:
            return BtfShapeError("bpftool is not installed, so the kernel's BTF cannot be read "
                                 "(Debian: apt-get install bpftool; Ubuntu: apt-get install "
                                 "linux-tools-common linux-tools-$(uname -r))")
        result = self.system.kernel_btf_raw()
        if result.returncode != 0:
            return BtfShapeError(f"`{' '.join(result.argv)}` failed (exit {result.returncode}):"
                                 f"\n{result.output()}")
        try:
            return parse_kernel_cc_btf(result.stdout)
        except BtfShapeError as e:
            return e

    def _source(self, name: str) -> Path:
        if name in RECOVERY_VARIANTS:
            return self.source_dir / RECOVERY_SOURCE
        return self.source_dir / f"{name}.bpf.c"

    @staticmethod
    def _display(path: Path) -> str:
        try:
            return str(path.resolve().relative_to(REPO_ROOT))
        except ValueError:
            return str(path)

    def _ebpf_problems(self, name: str) -> list[str]:
        """What prevents registering bpf_<name> here; empty when nothing does."""
        if name in RECOVERY_VARIANTS:
            try:
                kernel = self.kernel_cc_btf()
            except BtfShapeError as e:
                return [f"cannot choose which build of {RECOVERY_SOURCE} to register: {e}"]
            if not kernel.struct_ops:
                return [f"the kernel's BTF has no {STRUCT_OPS_VALUE}: it cannot register a TCP "
                        "congestion control from eBPF (struct_ops needs Linux >= 5.6 with "
                        "CONFIG_BPF_JIT and CONFIG_DEBUG_INFO_BTF)"]
        obj, src = self._object(name), self._source(name)
        problems: list[str] = []
        if not obj.is_file():
            problems.append(f"{self._display(obj)} not built: build native/ "
                            "(cmake -S native -B build/native && make -C build/native)")
        if not src.is_file():
            problems.append(f"source {self._display(src)} missing")
        if obj.is_file() and src.is_file():
            inputs = [src, *src.parent.glob("*.h")]
            newest_input = max(p.stat().st_mtime for p in inputs)
            if obj.stat().st_mtime < newest_input:
                problems.append(f"{self._display(obj)} is older than its source in "
                                f"{self._display(src.parent)}: rebuild native/ "
                                "(make -C build/native)")
        if self.system.euid() != 0:
            problems.append(f"registering an eBPF congestion control needs root "
                            f"(effective uid is {self.system.euid()})")
        if not self.system.btf_present():
            problems.append(f"{KERNEL_BTF} is missing: this kernel was built without "
                            "CONFIG_DEBUG_INFO_BTF, so struct_ops cannot be loaded")
        if self.system.which("bpftool") is None:
            problems.append("bpftool is not installed (Debian: apt-get install bpftool; "
                            "Ubuntu: linux-tools-common and linux-tools-$(uname -r))")
        return problems

    @contextmanager
    def _ebpf(self, name: str, requested: str, notes: list[str]) -> Iterator[CcResolution]:
        kernel_name = EBPF_PREFIX + name
        with self._locked():
            self._cleanup_stale_locked()
            record = self._acquire(name, kernel_name)
            holders = len(self._live_holders(kernel_name))
        detail = (f"eBPF struct_ops {kernel_name} (id {record.struct_ops_id}) from "
                  f"{self._display(Path(record.object_path))}, held by {holders} process(es)")
        current = _sha256(self._source(name))
        if current != record.source_sha256:
            detail += (f"; note: registered from an earlier source (sha256 "
                       f"{record.source_sha256[:12]}), current source is {current[:12]}")
        if notes:
            detail += "; " + "; ".join(notes)
        try:
            yield CcResolution(requested, kernel_name, "ebpf", record.source_sha256, detail,
                               self.kernel_cc_btf().shape if name in RECOVERY_VARIANTS
                               else None)
        finally:
            with self._locked():
                self._release(kernel_name)

    def _record_dir(self, kernel_name: str) -> Path:
        return self.state_dir / kernel_name

    def _read_record(self, kernel_name: str) -> _Registration | None:
        path = self._record_dir(kernel_name) / "record.json"
        try:
            return _Registration.from_json(path.read_text())
        except FileNotFoundError:
            return None
        except (ValueError, TypeError) as e:
            raise CcUnavailable(f"{path}: unreadable registration record ({e}); "
                                "if no run is active, remove it and run `./repro clean`") from e

    def _write_record(self, record: _Registration) -> None:
        directory = self._record_dir(record.kernel_name)
        directory.mkdir(parents=True, exist_ok=True)
        tmp = directory / "record.json.tmp"
        tmp.write_text(record.to_json())
        tmp.replace(directory / "record.json")

    def _struct_ops_ids(self, kernel_name: str) -> list[int]:
        """Ids of registered struct_ops maps with this name (bpftool -j struct_ops show)."""
        result = self.system.run(["bpftool", "-j", "struct_ops", "show"])
        if result.returncode != 0:
            raise CcUnavailable(f"`bpftool -j struct_ops show` failed (exit "
                                f"{result.returncode}):\n{result.output()}")
        try:
            entries = json.loads(result.stdout or "[]")
        except ValueError as e:
            raise CcUnavailable(f"`bpftool -j struct_ops show` printed no JSON ({e}):\n"
                                f"{result.output()}") from e
        return sorted(int(e["id"]) for e in entries if e.get("name") == kernel_name)

    def _registered(self, kernel_name: str) -> bool:
        return kernel_name in self._kernel_list()

    def _acquire(self, name: str, kernel_name: str) -> _Registration:
        """Register bpf_<name> unless a live registration of ours exists; add our holder."""
        record = self._read_record(kernel_name)
        ids = self._struct_ops_ids(kernel_name)
        live = self._registered(kernel_name)
        if live and record is not None and record.struct_ops_id in ids:
            self._add_holder(kernel_name)
            return record
        if live:
            # Registered, but not by us (or under an id we never recorded).
            raise CcUnavailable(
                f"{kernel_name} is already registered (struct_ops id(s) "
                f"{', '.join(map(str, ids)) or 'unknown'}) but {self._record_dir(kernel_name)} "
                "has no record of it, so netrepro will not use or remove it. If you "
                "registered it by hand, remove it with `bpftool struct_ops unregister "
                f"name {kernel_name}` and retry.")
        if ids:
            log.info("%s: struct_ops id(s) %s linger after being unregistered (sockets still "
                     "use them); registering anew", kernel_name, ids)
        obj, src = self._object(name), self._source(name)
        pending = _Registration(kernel_name, "registering", None, _sha256(src), str(obj))
        self._write_record(pending)  # first, so a crash below leaves a trace we own
        self._add_holder(kernel_name)
        result = self.system.run(["bpftool", "struct_ops", "register", str(obj)])
        if result.returncode != 0:
            self._remove_holder(kernel_name)
            # Nothing was registered: the pending record must not outlive this.
            (self._record_dir(kernel_name) / "record.json").unlink(missing_ok=True)
            self._drop_record_if_unheld(kernel_name)
            raise CcUnavailable(
                f"`bpftool struct_ops register {self._display(obj)}` failed (exit "
                f"{result.returncode}); a verifier rejection shows its log here:\n"
                f"{result.output()}")
        new_ids = sorted(set(self._struct_ops_ids(kernel_name)) - set(ids))
        if len(new_ids) != 1 or not self._registered(kernel_name):
            raise CcUnavailable(
                f"bpftool registered {self._display(obj)} but {kernel_name} then showed "
                f"new struct_ops id(s) {new_ids} and {AVAILABLE_PATH} lists: "
                f"{' '.join(self._kernel_list())}. bpftool said:\n{result.output()}")
        record = _Registration(kernel_name, "registered", new_ids[0], pending.source_sha256,
                               str(obj))
        self._write_record(record)
        log.info("registered %s (struct_ops id %d)", kernel_name, new_ids[0])
        return record

    def _release(self, kernel_name: str) -> None:
        self._remove_holder(kernel_name)
        if self._live_holders(kernel_name):
            return
        try:
            record = self._read_record(kernel_name)
            if record is not None:
                self._unregister(record)
        except CcUnavailable as e:
            # Runs at the end of a run: keep the record so `./repro clean` retries.
            log.error("could not unregister %s: %s", kernel_name, e)
            return
        self._drop_record_if_unheld(kernel_name)

    def _unregister(self, record: _Registration) -> str:
        """Unregister the struct_ops of one of our records; say what happened."""
        if not self._registered(record.kernel_name):
            return f"{record.kernel_name} was no longer registered"
        ids = self._struct_ops_ids(record.kernel_name)
        if record.struct_ops_id is not None:
            # Only the id we registered, and only while it still carries our name.
            targets = [record.struct_ops_id] if record.struct_ops_id in ids else []
        else:
            # bpftool ran but we died before recording the id: the name is ours. Lingering
            # ids refuse to unregister (EINPROGRESS); what counts is the kernel's list after.
            targets = ids if record.state == "registering" else []
        if not targets:
            return f"{record.kernel_name} was no longer registered"
        done, failures = [], []
        for struct_ops_id in targets:
            result = self.system.run(["bpftool", "struct_ops", "unregister", "id",
                                      str(struct_ops_id)])
            if result.returncode == 0:
                done.append(struct_ops_id)
                log.info("unregistered %s (struct_ops id %d)", record.kernel_name,
                         struct_ops_id)
            else:
                failures.append(f"`bpftool struct_ops unregister id {struct_ops_id}` failed "
                                f"(exit {result.returncode}):\n{result.output()}")
        if self._registered(record.kernel_name):
            raise CcUnavailable(f"{record.kernel_name} is still registered after "
                                "unregistering it: " + "\n".join(failures))
        return f"unregistered {record.kernel_name} (id {', '.join(map(str, done))})"

    def _cleanup_stale_locked(self) -> list[str]:
        report = []
        for directory in sorted(p for p in self.state_dir.iterdir() if p.is_dir()):
            kernel_name = directory.name
            if kernel_name not in {EBPF_PREFIX + v for v in ALL_EBPF_VARIANTS}:
                continue  # not ours to interpret
            dead = self._dead_holders(kernel_name)
            for holder in dead:
                holder.unlink()
            if self._live_holders(kernel_name):
                continue
            record = self._read_record(kernel_name)
            if record is None and not dead:
                continue
            what = self._unregister(record) if record is not None else \
                f"{kernel_name} had holders but no record"
            self._drop_record_if_unheld(kernel_name)
            report.append(f"{what}; its {len(dead)} holder(s) had exited")
        return report

    # ----------------------------------------------------- holders and locks

    def _holders_dir(self, kernel_name: str) -> Path:
        return self._record_dir(kernel_name) / "holders"

    def _holder_path(self, kernel_name: str) -> Path:
        return self._holders_dir(kernel_name) / str(self.system.pid())

    def _add_holder(self, kernel_name: str) -> None:
        """Count one more use by this process (a process may hold it several times)."""
        path = self._holder_path(kernel_name)
        path.parent.mkdir(parents=True, exist_ok=True)
        count = _read_holder(path)[1] if path.exists() else 0
        start = self.system.process_start_time(self.system.pid())
        path.write_text(json.dumps({"start_time": start, "count": count + 1}))

    def _remove_holder(self, kernel_name: str) -> None:
        path = self._holder_path(kernel_name)
        if not path.exists():
            return
        start, count = _read_holder(path)
        if count > 1:
            path.write_text(json.dumps({"start_time": start, "count": count - 1}))
        else:
            path.unlink()

    def _holder_alive(self, path: Path) -> bool:
        try:
            pid = int(path.name)
        except ValueError:
            return False
        start, _ = _read_holder(path)
        now = self.system.process_start_time(pid)
        # A different start time means the PID was reused by another process.
        return now is not None and (start is None or now == start)

    def _live_holders(self, kernel_name: str) -> list[Path]:
        directory = self._holders_dir(kernel_name)
        if not directory.is_dir():
            return []
        return [p for p in sorted(directory.iterdir()) if self._holder_alive(p)]

    def _dead_holders(self, kernel_name: str) -> list[Path]:
        directory = self._holders_dir(kernel_name)
        if not directory.is_dir():
            return []
        return [p for p in sorted(directory.iterdir()) if not self._holder_alive(p)]

    def _drop_record_if_unheld(self, kernel_name: str) -> None:
        if self._live_holders(kernel_name):
            return
        directory = self._record_dir(kernel_name)
        for path in (directory / "record.json", directory / "record.json.tmp"):
            path.unlink(missing_ok=True)
        holders = self._holders_dir(kernel_name)
        if holders.is_dir():
            for path in holders.iterdir():
                path.unlink()
            holders.rmdir()
        if directory.is_dir() and not any(directory.iterdir()):
            directory.rmdir()

    def _locked(self) -> ContextManager[None]:
        return exclusive_lock(self.state_dir / "lock")


def _read_holder(path: Path) -> tuple[str | None, int]:
    """(start_time, count) of a holder file; a damaged file counts once."""
    try:
        data = json.loads(path.read_text())
        return data.get("start_time"), int(data.get("count", 1))
    except (ValueError, TypeError, AttributeError, FileNotFoundError):
        return None, 1


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()
