"""A TCP run's end hosts: how late each kernel processed what arrived (netif_rx to
netif_receive_skb), from trace lines as tracefs prints them, and how the recorder routes them."""
from __future__ import annotations

from pathlib import Path

from kernel.stack_delay import StackDelayMeter, interface_filter, percentiles
from core.tcp_probe_format import PROBE_FILE, ProbeCsvWriter
from kernel.tcp_probe_recorder import TcpProbeRecorder, TcpProbeSetup, _Record

SENDER, RECEIVER = "nr4a034cs-eth0", "nr4a034cr-eth0"
ROLES = {"sender": SENDER, "receiver": RECEIVER}


def line(task: str, time: str, event: str, dev: str, skb: str) -> str:
    # As a tracefs instance with the mono clock prints them (read on a 6.18 kernel).
    return (f"   {task}   [001] b....   {time}: {event}: dev={dev} skbaddr={skb} len=52")


PROBE = ("          iperf3-13151   [001] ..s2. 927.781070: tcp_probe: family=AF_INET "
         "src=10.0.0.1:28647 dest=10.0.0.2:5201 mark=0x0 data_len=0 snd_nxt=0xcbc35dc8 "
         "snd_una=0xcbc2b31e snd_cwnd=10 ssthresh=7 snd_wnd=43690 srtt=41767 "
         "rcv_wnd=44032 sock_cookie=3e skbaddr=00000000f5e7af57 skaddr=0000000031c41a41")


def test_each_buffer_is_timed_from_entering_the_stack_to_being_processed() -> None:
    meter = StackDelayMeter(ROLES)
    fed = [meter.feed(line("netrepro-link-10131", "927.781062", "netif_rx", SENDER, "aa")),
           meter.feed(line("netrepro-link-10131", "927.781063", "netif_receive_skb", SENDER,
                           "aa")),
           # The same address again later is another buffer.
           meter.feed(line("netrepro-link-10131", "927.800063", "netif_rx", SENDER, "aa")),
           meter.feed(line("ksoftirqd/1-23", "927.803563", "netif_receive_skb", SENDER, "aa")),
           meter.feed(line("netrepro-link-10131", "927.900000", "netif_rx", RECEIVER, "bb")),
           meter.feed(line("netrepro-link-10131", "927.900010", "netif_receive_skb", RECEIVER,
                           "bb"))]
    assert all(fed)
    facts = meter.facts()
    assert facts["sender"] == {"interface": SENDER, "in_ksoftirqd": 1,
                               "stack_delay_us": {"p50": 1, "p90": 3500, "p99": 3500,
                                                  "max": 3500, "count": 2}}
    assert facts["receiver"]["stack_delay_us"]["p99"] == 10
    assert facts["receiver"]["in_ksoftirqd"] == 0
    assert facts["unmatched"] == 0


def test_other_lines_are_left_for_the_probe_and_strangers_are_ignored() -> None:
    meter = StackDelayMeter(ROLES)
    assert not meter.feed(PROBE)
    assert not meter.feed(line("x-1", "1.000001", "netif_rx", "eth9", "cc")), "not our host"
    assert not meter.feed(line("x-1", "1.000001", "net_dev_xmit", SENDER, "cc"))
    assert not meter.feed("CPU:1 [LOST 12 EVENTS]")
    # Processed with no netif_rx on record (it entered before the events were on): counted.
    assert meter.feed(line("x-1", "1.000002", "netif_receive_skb", SENDER, "dd"))
    assert meter.facts()["unmatched"] == 1
    assert meter.facts()["sender"]["stack_delay_us"]["count"] == 0


def test_percentiles_are_nearest_rank_as_the_native_histogram() -> None:
    counts = {v: 1 for v in range(1, 101)}
    assert percentiles(counts) == {"p50": 50, "p90": 90, "p99": 99, "max": 100, "count": 100}
    assert percentiles({7: 3}) == {"p50": 7, "p90": 7, "p99": 7, "max": 7, "count": 3}
    assert percentiles({}) == {"p50": 0, "p90": 0, "p99": 0, "max": 0, "count": 0}


def test_the_filter_names_both_interfaces() -> None:
    assert interface_filter(ROLES) == f'name == "{SENDER}" || name == "{RECEIVER}"'


def _recorder(tmp_path: Path, interfaces: dict[str, str]) -> TcpProbeRecorder:
    instance = tmp_path / "instances" / "netrepro-nrtest"
    setup = TcpProbeSetup(tmp_path / "state", tracefs=tmp_path)
    record = _Record("netrepro-nrtest", 1, None, 20001, 5201)
    return TcpProbeRecorder(setup, instance, record, tmp_path, interfaces)


def test_the_recorder_sends_netif_lines_to_the_meter_and_the_rest_to_the_csv(
        tmp_path: Path) -> None:
    recorder = _recorder(tmp_path, ROLES)
    for event in ("net/netif_rx", "net/netif_receive_skb"):
        folder = recorder.instance / "events" / event
        folder.mkdir(parents=True)
        (folder / "filter").write_text("")
        (folder / "enable").write_text("0")
    recorder._arm_stack_delay()
    assert (recorder.instance / "events/net/netif_rx/filter").read_text() == \
        interface_filter(ROLES)
    recorder._writer = ProbeCsvWriter(tmp_path)
    text = "\n".join([line("l-1", "927.781062", "netif_rx", SENDER, "aa"), PROBE,
                      line("l-1", "927.781064", "netif_receive_skb", SENDER, "aa")]) + "\n"
    recorder._feed(text[:50])  # a line split across two reads
    recorder._feed(text[50:])
    recorder._writer.close()
    assert recorder._meter is not None
    assert recorder._meter.facts()["sender"]["stack_delay_us"]["max"] == 2
    assert recorder._writer.parser.samples == 1
    assert recorder._writer.parser.unparsed_lines == 0
    assert len((tmp_path / PROBE_FILE).read_text().splitlines()) == 2


def test_without_the_netif_events_the_facts_say_why(tmp_path: Path) -> None:
    recorder = _recorder(tmp_path, ROLES)
    recorder.instance.mkdir(parents=True)
    recorder._arm_stack_delay()
    facts = recorder._stack_delay_facts(stuck=False)
    assert facts["status"] == "unavailable"
    assert "net:netif_rx" in facts["reason"]
    assert _recorder(tmp_path, {})._stack_delay_facts(stuck=False) == \
        {"status": "not requested"}
