"""The HTB shaper's tc arguments, as DCTCP's RED path and the bench's comparison use them."""
from __future__ import annotations

from kernel.htb import htb_rate_steps


def test_red_path_keeps_htbs_default_burst() -> None:
    assert htb_rate_steps("s-eth3", 100.0, ["handle", "10:", "red", "limit", "1"]) == [
        ["qdisc", "add", "dev", "s-eth3", "root", "handle", "1:", "htb", "default", "1"],
        ["class", "add", "dev", "s-eth3", "parent", "1:", "classid", "1:1", "htb",
         "rate", "100mbit", "ceil", "100mbit"],
        ["qdisc", "add", "dev", "s-eth3", "parent", "1:1", "handle", "10:", "red", "limit", "1"]]


def test_a_burst_of_one_frame_is_set_for_both_rates() -> None:
    _, cls, _ = htb_rate_steps("m-eth1", 1000.0, ["handle", "10:", "pfifo"], burst_bytes=1514)
    assert cls[-8:] == ["rate", "1000mbit", "ceil", "1000mbit",
                        "burst", "1514b", "cburst", "1514b"]
