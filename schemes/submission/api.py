"""Which of the three public API generations a submission's controller.hh follows, read
before anything is compiled (docs/contest.md)."""
from __future__ import annotations

import re
from dataclasses import dataclass

from core.errors import UsageError

GENERATIONS = {
    1: "keithw/datagrump (2013): packet_was_sent(seq, send_ts)",
    2: "keithw/sourdough before after_timeout: datagram_was_sent(seq, send_ts)",
    3: "keithw/sourdough today: datagram_was_sent(seq, send_ts, after_timeout)",
}


class SubmissionRefused(UsageError):
    """The submission is not something the contest can build; the message says why."""


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
