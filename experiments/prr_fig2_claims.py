"""PRR (IMC 2011) Figure 2's claims, as data, and their evaluation on summary rows.

Every tolerance and its reason was written before any run of this experiment
was looked at; none is to be changed to make a claim pass. A claim is
evaluated on the median over trials of each cell (pattern, size, recovery,
congestion control, controller): the controllers only carry out the drop
plan, so a claim must hold under each one that ran. Verdicts: PASS, FAIL,
NOT RUN (the rows it needs are not on record; the result says which).

Written to claims.csv, claims.md and claims.json beside summary.csv. (A
shared claims mechanism may replace the evaluation here; the declarations
are meant to carry over.)
"""
from __future__ import annotations

import csv
import json
import statistics
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

PASS, FAIL, NOT_RUN = "PASS", "FAIL", "NOT RUN"
KERNEL_PRR, BPF_PRR, RATE_HALVING, RFC3517 = "prr-kernel", "prr-bpf", "rate-halving", "rfc3517"
# ssthresh as a fraction of the window at the loss: Reno halves, Cubic keeps 717/1024.
BETA = {"reno": 0.5, "cubic": 717 / 1024}

Row = Mapping[str, Any]


@dataclass(frozen=True)
class PrrClaim:
    id: str
    text: str
    paper: str  # what the paper (or the 2015 reproduction) says, in its words
    kind: str  # a key of CHECKS
    tolerance: str
    reason: str  # why that tolerance, written before the data
    params: tuple[tuple[str, Any], ...] = ()

    def param(self, key: str, default: Any = None) -> Any:
        return dict(self.params).get(key, default)


@dataclass(frozen=True)
class ClaimResult:
    id: str
    verdict: str
    ours: str
    text: str
    paper: str
    tolerance: str
    reason: str
    cells: list[str] = field(default_factory=list)


CLAIMS: tuple[PrrClaim, ...] = (
    PrrClaim(
        id="prr-exits-at-ssthresh", kind="exit_vs_ssthresh",
        text="PRR ends recovery with cwnd at ssthresh (kernel PRR and the eBPF PRR)",
        paper="PRR: cwnd ends at ssthresh after recovery (Fig. 2; RFC 6937 sec. 3)",
        tolerance="abs(cwnd at exit - ssthresh) <= 1 segment in every cell",
        reason="Linux sets cwnd = ssthresh when recovery ends and tcp_probe samples before "
               "the next ACK is processed, so the first sample after the exit shows it; one "
               "segment admits integer rounding of PRR's last step",
        params=(("recoveries", (KERNEL_PRR, BPF_PRR)), ("max_gap", 1))),
    PrrClaim(
        id="ssthresh-is-beta-of-window", kind="ssthresh_ratio",
        text="ssthresh at recovery entry is half the pre-loss window under Reno, 0.7 of it "
             "under Cubic",
        paper="ssthresh = 0.5 (Reno) / 0.7 (Cubic) of the window at the loss",
        tolerance="abs(ssthresh - beta x cwnd at entry) <= 1 segment in every cell",
        reason="the kernel truncates beta x cwnd to whole segments, and the pre-loss window is "
               "read from the last tcp_probe sample before the state change",
        params=(("max_gap", 1),)),
    PrrClaim(
        id="rate-halving-ends-below", kind="exit_below_ssthresh",
        text="Rate halving ends recovery with cwnd below ssthresh",
        paper="without PRR, cwnd ends far below ssthresh",
        tolerance="cwnd at exit <= ssthresh - 1 segment in every cell",
        reason="qualitative claim: strictly below, no slack (a window equal to ssthresh is "
               "PRR's outcome, not rate halving's)",
        params=(("recovery", RATE_HALVING), ("margin", 1))),
    PrrClaim(
        id="rate-halving-collapses-heavy", kind="exit_at_most",
        text="Under heavy loss rate halving's cwnd collapses to about one segment",
        paper="cwnd collapses to 1 under heavy loss",
        tolerance="cwnd at exit <= 2 segments (heavy pattern, every size)",
        reason="rate halving moderates cwnd to in-flight + 1; one segment still in flight at "
               "the exit would show 2",
        params=(("recovery", RATE_HALVING), ("pattern", "heavy"), ("limit", 2))),
    PrrClaim(
        id="rfc3517-bursts", kind="burst_larger",
        text="RFC 3517 sends in bursts once pipe falls below ssthresh; PRR spreads its "
             "sends over the ACKs",
        paper="RFC 3517: bursts of retransmissions/new data after large partial ACKs",
        tolerance="largest burst in recovery of RFC 3517 >= PRR's in every cell and > in at "
                  "least one",
        reason="qualitative ordering of segment counts from the sender capture: no slack",
        params=(("recovery", RFC3517), ("against", KERNEL_PRR))),
    PrrClaim(
        id="rfc3517-waits", kind="waits_longer",
        text="RFC 3517 sends nothing new until pipe falls below ssthresh (base pattern: the "
             "window is in flight when the loss is detected)",
        paper="RFC 3517: silence until pipe < ssthresh",
        tolerance="ACKs in recovery before the first new segment: RFC 3517 > PRR (base "
                  "pattern, every size)",
        reason="qualitative ordering of ACK counts: no slack; a sender that sends no new data "
               "in recovery waited all its ACKs; a cell where all data was sent before "
               "recovery began has nothing to hold back and does not count",
        params=(("recovery", RFC3517), ("against", KERNEL_PRR), ("pattern", "base"))),
    PrrClaim(
        id="prr-faster-heavy", kind="faster",
        text="Under heavy loss PRR completes the transfer faster than rate halving",
        paper="transfer time under heavy loss roughly halves with PRR",
        tolerance="PRR's transfer time < 0.9 x rate halving's (heavy pattern, every size)",
        reason="a difference under 10% is within what 4 ms timer ticks (HZ=250) and this "
               "shared VM's scheduling move a transfer of well under a second",
        params=(("recovery", KERNEL_PRR), ("against", RATE_HALVING), ("pattern", "heavy"),
                ("ratio", 0.9))),
    PrrClaim(
        id="prr-halves-heavy", kind="faster",
        text="Under heavy loss PRR's transfer takes about half rate halving's",
        paper="roughly halves",
        tolerance="ratio <= 0.75 (heavy pattern, every size)",
        reason="'roughly half' read from the paper's plots; 0.75 is the loosest reading that "
               "is still 'about half' and not just 'faster'",
        params=(("recovery", KERNEL_PRR), ("against", RATE_HALVING), ("pattern", "heavy"),
                ("ratio", 0.75))),
    PrrClaim(
        id="bpf-prr-matches-kernel", kind="same_exit",
        text="The eBPF PRR ends recovery with the kernel PRR's window (an independent check)",
        paper="(our check: the two implementations of one algorithm)",
        tolerance="abs(cwnd at exit (eBPF) - cwnd at exit (kernel)) <= 1 segment in every cell",
        reason="one ACK's difference in when the last step lands",
        params=(("recovery", BPF_PRR), ("against", KERNEL_PRR), ("max_gap", 1))),
)


# ------------------------------------------------------------------ evaluation

Cell = tuple[str, int, str, str, str]  # pattern, size, recovery, cc, controller


def cells(rows: Sequence[Row]) -> dict[Cell, list[Row]]:
    out: dict[Cell, list[Row]] = {}
    for row in rows:
        if not row.get("drops_as_planned"):
            continue  # an invalid run never counts (it is a failed run anyway)
        key = (str(row["pattern"]), int(row["size_bytes"]), str(row["recovery"]),
               str(row["cc"]), str(row.get("controller", "")))
        out.setdefault(key, []).append(row)
    return out


def median(rows: Sequence[Row], column: str) -> float | None:
    values = [float(r[column]) for r in rows if r.get(column) not in (None, "")]
    return statistics.median(values) if values else None


def _name(cell: Cell) -> str:
    return f"{cell[0]} {cell[1] // 1024} KB {cell[2]} {cell[3]}{_via(cell)}"


def _via(cell: Cell) -> str:
    return f" ({cell[4]})" if cell[4] else ""


def _per_cell(claim: PrrClaim, groups: dict[Cell, list[Row]], recoveries: Sequence[str],
              test: Callable[[Cell, list[Row]], tuple[bool, str] | None]) -> ClaimResult:
    verdicts: list[bool] = []
    notes: list[str] = []
    pattern = claim.param("pattern")
    for cell, rows in sorted(groups.items()):
        if cell[2] not in recoveries or (pattern and cell[0] != pattern):
            continue
        outcome = test(cell, rows)
        if outcome is None:
            continue
        ok, text = outcome
        verdicts.append(ok)
        notes.append(f"{_name(cell)}: {text}{'' if ok else ' (fails)'}")
    return _result(claim, verdicts, notes)


def _paired(claim: PrrClaim, groups: dict[Cell, list[Row]],
            test: Callable[[Cell, list[Row], list[Row]], tuple[bool, str] | None]
            ) -> ClaimResult:
    verdicts: list[bool] = []
    notes: list[str] = []
    pattern = claim.param("pattern")
    for cell, rows in sorted(groups.items()):
        if cell[2] != claim.param("recovery") or (pattern and cell[0] != pattern):
            continue
        other = groups.get((cell[0], cell[1], claim.param("against"), cell[3], cell[4]))
        if not other:
            continue
        outcome = test(cell, rows, other)
        if outcome is None:
            continue
        ok, text = outcome
        verdicts.append(ok)
        notes.append(f"{cell[0]} {cell[1] // 1024} KB {cell[3]}{_via(cell)}: {text}"
                     f"{'' if ok else ' (fails)'}")
    return _result(claim, verdicts, notes)


def _result(claim: PrrClaim, verdicts: list[bool], notes: list[str]) -> ClaimResult:
    if not verdicts:
        verdict = NOT_RUN
        ours = "no finished run of the cells it needs (or none with a recovery episode)"
    else:
        verdict = PASS if all(verdicts) else FAIL
        ours = "; ".join(notes)
    return ClaimResult(claim.id, verdict, ours, claim.text, claim.paper, claim.tolerance,
                       claim.reason, notes)


def _fmt(value: float | None) -> str:
    return "-" if value is None else f"{value:.3g}"


def evaluate(claim: PrrClaim, rows: Sequence[Row]) -> ClaimResult:
    groups = cells(rows)
    kind = claim.kind
    if kind == "exit_vs_ssthresh":
        def test(cell: Cell, rs: list[Row]):
            cw, ss = median(rs, "cwnd_exit"), median(rs, "ssthresh_exit")
            if cw is None or ss is None:
                return None
            return abs(cw - ss) <= claim.param("max_gap"), f"cwnd {_fmt(cw)} vs ssthresh {_fmt(ss)}"
        return _per_cell(claim, groups, claim.param("recoveries"), test)
    if kind == "ssthresh_ratio":
        def test(cell: Cell, rs: list[Row]):
            cw, ss = median(rs, "cwnd_entry"), median(rs, "ssthresh_entry")
            if cw is None or ss is None or cell[3] not in BETA:
                return None
            expect = BETA[cell[3]] * cw
            return (abs(ss - expect) <= claim.param("max_gap"),
                    f"ssthresh {_fmt(ss)} vs {BETA[cell[3]]:.2f} x {_fmt(cw)} = {expect:.1f}")
        return _per_cell(claim, groups, (KERNEL_PRR, BPF_PRR, RATE_HALVING, RFC3517), test)
    if kind == "exit_below_ssthresh":
        def test(cell: Cell, rs: list[Row]):
            cw, ss = median(rs, "cwnd_exit"), median(rs, "ssthresh_exit")
            if cw is None or ss is None:
                return None
            return cw <= ss - claim.param("margin"), f"cwnd {_fmt(cw)} vs ssthresh {_fmt(ss)}"
        return _per_cell(claim, groups, (claim.param("recovery"),), test)
    if kind == "exit_at_most":
        def test(cell: Cell, rs: list[Row]):
            cw = median(rs, "cwnd_exit")
            if cw is None:
                return None
            return cw <= claim.param("limit"), f"cwnd at exit {_fmt(cw)}"
        return _per_cell(claim, groups, (claim.param("recovery"),), test)
    if kind == "burst_larger":
        larger: list[bool] = []

        def test(cell: Cell, a: list[Row], b: list[Row]):
            outcome = _compare(median(a, "max_burst"), median(b, "max_burst"),
                               "largest burst", strict=False)
            if outcome is not None:
                larger.append(median(a, "max_burst") > median(b, "max_burst"))
            return outcome
        result = _paired(claim, groups, test)
        if result.verdict == PASS and not any(larger):
            return ClaimResult(claim.id, FAIL, result.ours + " (never larger)", claim.text,
                               claim.paper, claim.tolerance, claim.reason, result.cells)
        return result
    if kind == "waits_longer":
        def test(cell: Cell, a: list[Row], b: list[Row]):
            if not median(a, "unsent_at_recovery_bytes") or \
                    not median(b, "unsent_at_recovery_bytes"):
                return None  # all data was out before recovery: nothing new to hold back
            return _compare(_waited(a), _waited(b), "ACKs before new data", strict=True)
        return _paired(claim, groups, test)
    if kind == "faster":
        def test(cell: Cell, a: list[Row], b: list[Row]):
            ta, tb = median(a, "transfer_time_s"), median(b, "transfer_time_s")
            if ta is None or tb is None or tb <= 0:
                return None
            ratio = ta / tb
            return (ratio < claim.param("ratio"),
                    f"{ta * 1000:.0f} ms vs {tb * 1000:.0f} ms (ratio {ratio:.2f})")
        return _paired(claim, groups, test)
    if kind == "same_exit":
        def test(cell: Cell, a: list[Row], b: list[Row]):
            ca, cb = median(a, "cwnd_exit"), median(b, "cwnd_exit")
            if ca is None or cb is None:
                return None
            return abs(ca - cb) <= claim.param("max_gap"), f"{_fmt(ca)} vs {_fmt(cb)}"
        return _paired(claim, groups, test)
    raise ValueError(f"unknown claim kind {kind!r} in {claim.id}")


def _waited(rows: list[Row]) -> float | None:
    """ACKs before the first new segment in recovery; all its ACKs when it sent none."""
    waited = median(rows, "acks_before_new")
    if waited is not None:
        return waited
    new = median(rows, "new_in_recovery")
    return median(rows, "recovery_acks") if new == 0 else None


def _compare(a: float | None, b: float | None, what: str, strict: bool
             ) -> tuple[bool, str] | None:
    if a is None or b is None:
        return None
    sign = ">" if a > b else ("=" if a == b else "<")
    ok = a > b if strict else a >= b
    return ok, f"{what} {_fmt(a)} {sign} {_fmt(b)}"


def evaluate_all(rows: Sequence[Row]) -> list[ClaimResult]:
    return [evaluate(c, rows) for c in CLAIMS]


def write_claims(results: Sequence[ClaimResult], out_dir: Path, mode: str) -> list[Path]:
    out_dir.mkdir(parents=True, exist_ok=True)
    csv_path, md_path, json_path = (out_dir / "claims.csv", out_dir / "claims.md",
                                    out_dir / "claims.json")
    columns = ["id", "verdict", "text", "paper", "ours", "tolerance", "reason"]
    with open(csv_path, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=columns, extrasaction="ignore")
        writer.writeheader()
        for r in results:
            writer.writerow(asdict(r))
    json_path.write_text(json.dumps({"experiment": "prr-fig2", "mode": mode,
                                     "claims": [asdict(r) for r in results]}, indent=1) + "\n")
    lines = [f"# prr-fig2: the paper's claims ({mode} mode)", "",
             "| claim | verdict | ours | tolerance (fixed before the data) |",
             "|---|---|---|---|"]
    for r in results:
        ours = r.ours.replace("|", "/")
        lines.append(f"| {r.text} | **{r.verdict}** | {ours} | {r.tolerance}: {r.reason} |")
    md_path.write_text("\n".join(lines) + "\n")
    return [csv_path, md_path, json_path]
