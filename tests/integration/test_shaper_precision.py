"""bench link (f) on a real path: both shapers carry one CUBIC flow at the rate, the capture
loses nothing, and the emulator's queue stays backlogged (so every gap counts). How many gaps
are within 10% is the machine's to say (timing is measured in benchmarks, not judged here)."""
from __future__ import annotations

import json
from pathlib import Path

from bench import shaper_precision
from core.paths import ProjectPaths

SECONDS = 5.0
# Payload over the frame on each basis: 1448 of 1514 bytes (HTB), 1448 of 1504 (emulator).
PAYLOAD_SHARE = {"htb": 1448 / 1514, "emulator": 1448 / 1504}


def test_both_shapers_carry_the_flow_and_are_judged_alike(
        paths: ProjectPaths, tmp_path: Path) -> None:
    result = shaper_precision.measure(paths, tmp_path, seconds=SECONDS)
    json.dumps(result)  # the bench prints it as JSON
    runs = result["paths"]
    assert set(runs) == {"emulator", "htb"}
    for shaper, r in runs.items():
        rate = shaper_precision.RATE_MBPS * PAYLOAD_SHARE[shaper]
        assert 0.9 * rate <= r["goodput_mbps"] <= 1.01 * rate, (shaper, r)
        assert r["capture_dropped"] == 0, (shaper, r)
        # ~8,300 frames a second, less slow start and the last second
        assert r["gaps"] > 0.8 * (SECONDS - 2.5) * 8000, (shaper, r)
        assert 0.0 <= r["fraction"] <= 1.0 and r["within_10pct"] <= r["gaps"]
    own = runs["emulator"]["emulator_own_gaps"]
    assert own["backlogged"] >= 0.95 * runs["emulator"]["frames"], own
    assert result["emulator_minus_htb"] == round(
        runs["emulator"]["fraction"] - runs["htb"]["fraction"], 4)
