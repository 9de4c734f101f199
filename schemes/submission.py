"""A controller submitted to the contest: checked, built and run as untrusted code.

A submission is a student's `controller.hh` + `controller.cc` written against one
of three public API generations of the datagrump framework (docs/contest.md):

  1 keithw/datagrump (2013):  packet_was_sent(seq, send_ts); Network::timestamp()
  2 keithw/sourdough before after_timeout:  datagram_was_sent(seq, send_ts);
    timestamp.hh's timestamp_ms()
  3 keithw/sourdough today:  datagram_was_sent(seq, send_ts, after_timeout)

The header is read before anything is compiled; a class that matches none of
them is refused naming the declaration that differs. The sources compile
unchanged: our own `timestamp.hh` (native/grump/student/compat) and an adapter
(native/grump/student/student_adapter.cc) turn the class into grump-sender's
controller "student". The build and each trial's sender run in boxes of their own
(schemes/box.py), with limits (schemes/sandbox.py). The scheme `submission` (not
listed; one parameter, the sources' hash) runs a built submission like any contest
controller, so the run's id includes the hash: changed code is a new run.
"""
from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import threading
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from core.artifacts import GRUMP_PORT
from core.endpoints import Endpoints
from core.errors import RunInvalid, UsageError
from core.paths import ProjectPaths
from schemes.base import SchemeUnavailable, StillRunning
from schemes.box import RO, WORK, Bind, Box, BoxedProcess, exit_status
from schemes.grump import GrumpScheme
from schemes.sandbox import BUILD_LIMITS, Limits, run_limits, signal_name
from core.settings import Setting
from schemes.table import SchemeEntry

if TYPE_CHECKING:
    from core.runspec import RunSpec

SOURCE_FILES = ("controller.hh", "controller.cc")
MAX_SOURCE_BYTES = 1 << 20
HASH_CHARS = 16
WINDOW_CAP = 10000  # student_adapter.cc's kWindowCap
BINARY = "grump-student-sender"
# The exit status grump-sender gives when no ACK arrived during the whole run.
NO_ACKS_STATUS = 3

GENERATIONS = {
    1: "keithw/datagrump (2013): packet_was_sent(seq, send_ts)",
    2: "keithw/sourdough before after_timeout: datagram_was_sent(seq, send_ts)",
    3: "keithw/sourdough today: datagram_was_sent(seq, send_ts, after_timeout)",
}


class SubmissionRefused(UsageError):
    """The submission is not something the contest can build; the message says why."""


# ------------------------------------------------------------------ the API check

_U64 = {"uint64_t", "std::uint64_t", "unsigned long", "unsigned long int", "long unsigned int",
        "long unsigned"}
_UINT = {"unsigned int", "unsigned"}
_EXPECTED = {
    "Controller": "Controller(bool debug)",
    "window_size": "unsigned int window_size()",
    "timeout_ms": "unsigned int timeout_ms()",
    "ack_received": ("void ack_received(uint64_t sequence_number_acked, uint64_t "
                     "send_timestamp_acked, uint64_t recv_timestamp_acked, uint64_t "
                     "timestamp_ack_received)"),
}
_SENT = {
    1: "void packet_was_sent(uint64_t sequence_number, uint64_t send_timestamp)",
    2: "void datagram_was_sent(uint64_t sequence_number, uint64_t send_timestamp)",
    3: ("void datagram_was_sent(uint64_t sequence_number, uint64_t send_timestamp, "
        "bool after_timeout)"),
}


@dataclass(frozen=True)
class Declaration:
    returns: str  # normalised, "" for a constructor
    name: str
    params: tuple[str, ...]  # normalised types
    text: str  # as written (whitespace collapsed)


def _strip_comments(text: str) -> str:
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    text = re.sub(r"//[^\n]*", " ", text)
    return re.sub(r'"(\\.|[^"\\])*"', '""', text)


def _class_body(text: str) -> str:
    match = re.search(r"\b(class|struct)\s+Controller\b[^;{]*\{", text)
    if match is None:
        raise SubmissionRefused("controller.hh declares no class Controller: the contest "
                                "calls a class named Controller (see docs/contest.md)")
    depth, out = 1, []
    for ch in text[match.end():]:
        if ch == "{":
            depth += 1
            if depth == 2:
                out.append(";")  # an inline body ends the declaration before it
            continue
        if ch == "}":
            depth -= 1
            if depth == 0:
                return "".join(out)
            continue
        if depth == 1:
            out.append(ch)
    raise SubmissionRefused("controller.hh: class Controller has no closing brace")


def _normalise_type(text: str) -> str:
    text = re.sub(r"\b(const|volatile|register)\b", " ", text)
    text = text.replace("&", " ").replace("*", " * ")
    return " ".join(text.split())


def _param_type(param: str) -> str:
    param = param.split("=")[0]
    kind = _normalise_type(param)
    words = kind.split(" ")
    type_words = {"unsigned", "signed", "int", "long", "short", "char", "bool", "double",
                  "float", "void", "*"}
    if len(words) > 1 and re.fullmatch(r"[A-Za-z_]\w*", words[-1]) and words[-1] not in type_words:
        words = words[:-1]  # the parameter's name
    return " ".join(words)


def declarations(header: str) -> list[Declaration]:
    """The function declarations of class Controller in a header."""
    body = _class_body(_strip_comments(header))
    body = re.sub(r"\b(public|private|protected)\s*:", ";", body)
    found = []
    for statement in body.split(";"):
        text = " ".join(statement.split())
        match = re.fullmatch(r"(?P<ret>[\w:\s<>,*&]*?)\s*\b(?P<name>~?\w+)\s*\((?P<args>[^()]*)\)"
                             r"\s*(const)?\s*(noexcept)?\s*(override|final)?\s*(=\s*\w+)?"
                             r"\s*(:.*)?", text)
        if match is None:
            continue
        ret = re.sub(r"\b(virtual|explicit|inline|static)\b", " ", match["ret"])
        args = [a for a in (x.strip() for x in match["args"].split(",")) if a and a != "void"]
        found.append(Declaration(_normalise_type(ret), match["name"],
                                 tuple(_param_type(a) for a in args), text))
    return found


def _matches(decl: Declaration, returns: set[str], params: list[set[str]]) -> bool:
    return (decl.returns in returns and len(decl.params) == len(params)
            and all(p in allowed for p, allowed in zip(decl.params, params)))


def check_api(header: str) -> int:
    """The API generation (1, 2 or 3) a controller.hh follows; SubmissionRefused naming the
    declaration that differs from all three otherwise."""
    decls = declarations(header)
    by_name: dict[str, list[Declaration]] = {}
    for d in decls:
        by_name.setdefault(d.name, []).append(d)

    def require(name: str, returns: set[str], params: list[set[str]]) -> None:
        if name not in by_name:
            raise SubmissionRefused(f"controller.hh: class Controller declares no {name}(); "
                                    f"every API generation has {_EXPECTED[name]}")
        if not any(_matches(d, returns, params) for d in by_name[name]):
            raise SubmissionRefused(
                f"controller.hh: `{by_name[name][0].text}` differs from the contest API: every "
                f"generation declares {_EXPECTED[name]}")

    require("Controller", {""}, [{"bool"}])
    require("window_size", _UINT, [])
    require("timeout_ms", _UINT, [])
    require("ack_received", {"void"}, [_U64] * 4)
    shapes = {1: ("packet_was_sent", [_U64, _U64]), 2: ("datagram_was_sent", [_U64, _U64]),
              3: ("datagram_was_sent", [_U64, _U64, {"bool"}])}
    found = [gen for gen, (name, params) in shapes.items()
             if any(_matches(d, {"void"}, params) for d in by_name.get(name, []))]
    if len(found) == 1:
        return found[0]
    accepted = "; ".join(f"{_SENT[g]} [{GENERATIONS[g].split(':')[0]}]" for g in _SENT)
    if not found:
        sent = by_name.get("datagram_was_sent", []) + by_name.get("packet_was_sent", [])
        if sent:
            raise SubmissionRefused(f"controller.hh: `{sent[0].text}` matches no API "
                                    f"generation; the sent-callback is one of: {accepted}")
        raise SubmissionRefused("controller.hh: class Controller declares no sent-callback "
                                f"(packet_was_sent or datagram_was_sent); one of: {accepted}")
    raise SubmissionRefused("controller.hh declares the sent-callbacks of several API "
                            f"generations ({', '.join(GENERATIONS[g] for g in found)}); "
                            "keep the one your controller.cc defines")


# ------------------------------------------------------------------ the sources


@dataclass(frozen=True)
class Sources:
    """The two files of a submission, read once; `digest` names them in run ids."""

    header: bytes
    body: bytes
    origin: str  # where they came from, for the record

    @property
    def sha256(self) -> str:
        """The hash of both files (names, lengths and bytes); `digest` is its start."""
        h = hashlib.sha256()
        for name, data in zip(SOURCE_FILES, (self.header, self.body)):
            h.update(name.encode() + b"\0" + str(len(data)).encode() + b"\0" + data)
        return h.hexdigest()

    @property
    def digest(self) -> str:
        return self.sha256[:HASH_CHARS]

    @classmethod
    def collect(cls, given: list[Path]) -> "Sources":
        """From a directory holding controller.hh and controller.cc, or those two files."""
        if len(given) == 1 and given[0].is_dir():
            folder = given[0]
            files = {name: folder / name for name in SOURCE_FILES}
        else:
            names = sorted(p.name for p in given)
            if names != sorted(SOURCE_FILES):
                raise SubmissionRefused(
                    "give a directory holding controller.hh and controller.cc, or exactly "
                    f"those two files (got: {', '.join(str(p) for p in given) or 'nothing'})")
            files = {p.name: p for p in given}
        data = {}
        for name, path in files.items():
            if not path.is_file():
                raise SubmissionRefused(f"{path}: no such file (a submission is "
                                        "controller.hh + controller.cc)")
            size = path.stat().st_size
            if size > MAX_SOURCE_BYTES:
                raise SubmissionRefused(f"{path}: {size} bytes; a source file may have at most "
                                        f"{MAX_SOURCE_BYTES} bytes")
            data[name] = path.read_bytes()
        return cls(data["controller.hh"], data["controller.cc"],
                   origin=", ".join(str(files[n].resolve()) for n in SOURCE_FILES))

    def api(self) -> int:
        return check_api(self.header.decode(errors="replace"))

    def write(self, folder: Path) -> None:
        """The two files, private to their owner (0600 in a 0700 folder)."""
        folder.mkdir(parents=True, exist_ok=True)
        folder.chmod(0o700)
        for name, data in zip(SOURCE_FILES, (self.header, self.body)):
            path = folder / name
            path.touch(mode=0o600)
            path.chmod(0o600)
            path.write_bytes(data)


# ------------------------------------------------------------------ the build


def builds_dir(paths: ProjectPaths) -> Path:
    return paths.state_dir / "contest-builds"


def binary_path(paths: ProjectPaths, digest: str) -> Path:
    return builds_dir(paths) / digest / BINARY


@dataclass(frozen=True)
class BuildResult:
    ok: bool
    log: str  # every command and what it printed, as printed
    reason: str = ""  # one line, when not ok
    binary: Path | None = None
    box: dict[str, Any] = field(default_factory=dict)  # the build's box, for the record


# The libraries and headers of ours a submission links against, bound read-only into the
# build's box (it sees nothing else of the checkout).
_LIBRARIES = (("grump", "libgrump_sender_main.a"), ("grump", "libgrump.a"),
              ("util", "libnetrepro_util.a"))
_INTERFACE_HEADERS = ("controller.hh", "controller_options.hh", "controller_registry.hh")
CXX_FLAGS = ("-O2", "-Wall", "-Wextra", "-fdiagnostics-color=never")
STUDENT_STD = "-std=gnu++17"
MAX_BINARY_BYTES = 256 << 20


def _compiler(paths: ProjectPaths) -> str:
    """The C++ compiler the native build used (same ABI as its libraries), links resolved:
    the box sees /usr, not /etc/alternatives."""
    found = shutil.which("g++") or "g++"
    cache = paths.build_dir / "CMakeCache.txt"
    if cache.is_file():
        for line in cache.read_text(errors="replace").splitlines():
            if line.startswith("CMAKE_CXX_COMPILER:"):
                found = line.split("=", 1)[1].strip()
                break
    real = os.path.realpath(found)
    if not real.startswith("/usr/"):
        raise SchemeUnavailable(f"the C++ compiler {found} is {real}, outside /usr: a build's "
                                "box sees only /usr of the machine")
    return real


def build_inputs_missing(paths: ProjectPaths) -> str | None:
    """Why this checkout cannot build submissions (a library of ours not built), or None."""
    for comp, name in _LIBRARIES:
        if not (paths.build_dir / comp / name).is_file():
            return (f"{name} is not built: run ./setup/install.sh (or cmake -S native -B "
                    "build/native && make -C build/native)")
    return None


def _build_binds(paths: ProjectPaths) -> list[Bind]:
    native = paths.root / "native" / "grump"
    binds = [Bind(native / "student" / "compat", f"{RO}/compat")]
    binds += [Bind(native / "student" / name, f"{RO}/netrepro/{name}")
              for name in ("student_adapter.cc", "compat_clock.cc", "compat_clock.hh")]
    binds += [Bind(native / name, f"{RO}/netrepro/grump/{name}") for name in _INTERFACE_HEADERS]
    binds += [Bind(paths.build_dir / comp / name, f"{RO}/lib/{name}") for comp, name in _LIBRARIES]
    return binds


def build(sources: Sources, api: int, paths: ProjectPaths,
          limits: Limits = BUILD_LIMITS) -> BuildResult:
    """Compile and link the submission in a box of its own (no network; it sees its sources,
    our headers and libraries, /usr); install the binary for the scheme."""
    why = build_inputs_missing(paths)
    if why:
        raise SchemeUnavailable(why)
    cxx = _compiler(paths)
    with Box.open("build", limits) as box:
        src, out = box.work / "src", box.work / "out"
        sources.write(src)
        out.mkdir()
        for p in (src, out, *src.iterdir()):
            os.chown(p, box.user.uid, box.user.gid)
        api_flag = f"-DNETREPRO_STUDENT_API={api}"
        lib = f"{RO}/lib"
        steps = [
            ("compile controller.cc",
             [cxx, STUDENT_STD, *CXX_FLAGS, "-iquote", ".", "-I", f"{RO}/compat", "-c",
              "controller.cc", "-o", "../out/controller.o"]),
            ("compile the adapter",
             [cxx, "-std=c++17", *CXX_FLAGS, api_flag, "-iquote", ".", "-I", f"{RO}/compat",
              "-c", f"{RO}/netrepro/student_adapter.cc", "-o", "../out/adapter.o"]),
            ("compile the clock",
             [cxx, "-std=c++17", *CXX_FLAGS, api_flag, "-I", f"{RO}/compat", "-c",
              f"{RO}/netrepro/compat_clock.cc", "-o", "../out/clock.o"]),
            ("link",
             [cxx, "-o", f"../out/{BINARY}", "../out/controller.o", "../out/adapter.o",
              "../out/clock.o", *(f"{lib}/{name}" for _, name in _LIBRARIES), "-lpthread"]),
        ]
        binds = _build_binds(paths)
        log_lines = []
        for label, command in steps:
            log_lines.append("$ " + " ".join(command))
            result = box.run(command, limits, binds, cwd=f"{WORK}/src")
            log_lines.append(result.output.rstrip())
            if result.timed_out:
                return BuildResult(False, "\n".join(log_lines),
                                   f"{label}: still running after {limits.wall_s:g} s (the "
                                   "build's time-out)", box=box.close())
            if result.returncode is not None and result.returncode != 0:
                why = signal_name(result.returncode)
                return BuildResult(False, "\n".join(log_lines),
                                   f"{label} failed" + (f" ({why})" if why else ""),
                                   box=box.close())
        try:
            binary = box.read_file(f"out/{BINARY}", MAX_BINARY_BYTES)
        except ValueError as e:
            return BuildResult(False, "\n".join(log_lines), f"link: {e}", box=box.close())
        if binary is None:
            return BuildResult(False, "\n".join(log_lines),
                               "link: the linker left no program", box=box.close())
        dest = binary_path(paths, sources.digest)
        dest.parent.mkdir(parents=True, exist_ok=True)
        for folder in (builds_dir(paths), dest.parent):
            folder.chmod(0o700)  # root's: only a box that binds a binary sees it
        # A name of its own: two builds of the same sources may finish side by side.
        tmp = dest.with_name(f".{BINARY}-{os.getpid()}-{threading.get_ident()}.tmp")
        tmp.write_bytes(binary)  # root-owned: the running code cannot change it
        tmp.chmod(0o755)
        os.replace(tmp, dest)
        return BuildResult(True, "\n".join(log_lines), binary=dest, box=box.close())


# ------------------------------------------------------------------ the scheme


class SubmissionScheme(GrumpScheme):
    """A built submission's sender, in a box of its own, against our grump-receiver."""

    STATS_MAX_BYTES = 1 << 20

    def __init__(self, digest: str, paths: ProjectPaths) -> None:
        super().__init__("student", paths)
        self.name = "submission"
        self.digest = digest
        binary = binary_path(paths, digest)
        if not binary.is_file():
            raise SchemeUnavailable(f"submission {digest} is not built ({binary}): submit it "
                                    "with ./repro contest submit")
        self.sender_bin = binary
        self.box: Box | None = None
        self.box_facts: dict[str, Any] = {}
        self.limits: Limits | None = None
        self._out_dir: Path | None = None
        self._stats_problem = "the sender wrote no statistics"

    def prepare(self, stack: ExitStack) -> dict[str, Any]:
        """The sender's box, made before the network and the trace's clock start (so its
        making is not inside the run's span); its facts, completed when it is closed, go
        into the run's meta.json."""
        self.box = Box.open("run", run_limits(0), self.box_facts)
        stack.callback(self._close_box)
        return {"box": self.box_facts}

    def _close_box(self) -> None:
        if self.box is not None:
            self.box.close()
            self.box = None

    def sender_args(self, ends: Endpoints, duration_s: float) -> list[str]:
        """As the box sees them: the binary under /box, the statistics in /work."""
        return [f"{RO}/{BINARY}", "--host", ends.receiver_ip, "--port", str(GRUMP_PORT),
                "--controller", "student", "--duration-s", f"{duration_s:g}",
                "--stats", f"{WORK}/{self.sender_label}.json"]

    def start_sender(self, ends: Endpoints, duration_s: float) -> None:
        if self.box is None:
            raise RuntimeError("the sender's box was not made (prepare() makes it)")
        self.limits = run_limits(duration_s)
        self.box_facts["limits"] = self.limits.describe()
        self._out_dir = ends.out_dir
        self.sender = BoxedProcess(
            self.box, ends.sender, self.sender_args(ends, duration_s), self.limits,
            [Bind(self.sender_bin, f"{RO}/{BINARY}")], ends.out_dir, self.sender_label,
            ends.on_process)

    def wait_sender(self, timeout_s: float) -> None:
        assert self.sender is not None
        try:
            code = self.sender.wait(timeout_s)
        except StillRunning:
            raise
        if code == 0:
            return
        why = signal_name(code)
        tail = self.sender.stderr_tail()
        if why is not None:
            limit = {"SIGXCPU": " (its CPU-time limit)", "SIGXFSZ": " (its file-size limit)",
                     "SIGKILL": " (killed: a limit, or stopped)"}.get(why, "")
            raise RuntimeError(f"the controller crashed: the sender was killed by {why}{limit}; "
                               f"its last output: {tail}")
        if code == NO_ACKS_STATUS:
            raise RuntimeError(f"the controller never got an ACK: it sent nothing the link "
                               f"delivered during the whole run; its last output: {tail}")
        raise RuntimeError(f"the sender exited with status {code}: {tail}")

    def verify(self, ends: Endpoints) -> dict[str, Any]:
        assert self.sender is not None
        stats = ends.out_dir / f"{self.sender_label}.json"
        try:
            complete = isinstance(json.loads(stats.read_text()), dict)
        except (OSError, ValueError):
            complete = False  # missing, or left empty (the sender creates it at start)
        if not complete:
            code = exit_status(self.sender.proc.returncode)
            if code is not None and code < 0:
                raise RunInvalid(f"the controller did not finish: the sender was still running "
                                 f"at the end of the trace and was stopped ({signal_name(code)}) "
                                 "before writing its statistics; a callback that never returns?")
            raise RunInvalid(self._stats_problem if not stats.exists() else
                             "the sender's statistics are incomplete (not one JSON object)")
        facts = super().verify(ends)
        params = facts["sender"].get("parameters", {})
        facts["window_capped"] = bool(params.get("windows_above_cap"))
        facts["limits"] = self.limits.describe() if self.limits else None
        facts["box_user"] = self.box_facts.get("user")
        return facts

    def stop(self) -> None:
        """Stop both programs; bring the sender's statistics out of its box; close the box
        (what outlived the sender is killed and recorded)."""
        super().stop()
        if self.box is None:
            return
        try:
            stats = self.box.read_file(f"{self.sender_label}.json", self.STATS_MAX_BYTES)
        except ValueError:
            self._stats_problem = "the sender's statistics file is over 1 MiB"
            stats = None
        if stats is not None and self._out_dir is not None:
            (self._out_dir / f"{self.sender_label}.json").write_bytes(stats)
        self._close_box()

    def describe(self) -> dict[str, Any]:
        return {"scheme": self.name, "family": "submission", "submission": self.digest,
                "binary": str(self.sender_bin), "boxed": True}


def _build(entry: SchemeEntry, spec: "RunSpec", paths: ProjectPaths) -> SubmissionScheme:
    return SubmissionScheme(str(entry.value(spec, "submission")), paths)


TABLE: tuple[SchemeEntry, ...] = (
    SchemeEntry("submission", "submission", "a controller submitted with ./repro contest submit",
                _build, params=(Setting("submission", str, "the submitted sources' hash",
                                        required=True),),
                label="submission", colour="black", marker="x", listed=False),
)
