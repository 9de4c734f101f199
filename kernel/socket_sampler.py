"""Sample a host's TCP sockets to one address every N ms: run inside the host's namespace.

    /usr/bin/python3 -m kernel.socket_sampler --dst 10.0.0.2 --interval-ms 10 \\
        --out socket-samples.csv --for-s 70

Every interval, one sock_diag dump (kernel/sock_diag.py: what `ss -tin` prints, read the way
ss reads it) gives each socket to --dst: its state, struct tcp_info (window, RTT, what is in
flight, delivery rate, pacing rate, bytes acknowledged, how long the receiver's window or the
send buffer limited it) and, for BBR, its own state (the max-filtered bandwidth, min RTT,
pacing and cwnd gains). One CSV line per socket per sample; `time_s` is CLOCK_MONOTONIC
seconds, like the emulator's logs and tcp-probe.csv. The loop stops on SIGTERM/SIGINT or
after --for-s (nothing runs for ever), flushing the file every second and at the end.
"""
from __future__ import annotations

import argparse
import csv
import signal
import sys
import time
from typing import Any

from kernel.sock_diag import STATES, SockDiag, SocketRecord, inflight

COLUMNS = ("time_s", "local_port", "remote_port", "state", "cc", "ca_state", "cwnd",
           "ssthresh", "rtt_us", "rttvar_us", "min_rtt_us", "unacked", "sacked", "lost",
           "retrans", "inflight", "delivery_rate_Bps", "app_limited", "pacing_rate_Bps",
           "bytes_acked", "bytes_sent", "delivered", "total_retrans", "busy_us",
           "rwnd_limited_us", "sndbuf_limited_us", "snd_wnd", "bbr_bw_Bps", "bbr_min_rtt_us",
           "bbr_pacing_gain", "bbr_cwnd_gain")
FLUSH_EVERY_S = 1.0


def row(time_s: float, r: SocketRecord) -> list[Any]:
    i = r.info
    bbr = r.bbr or ("", "", "", "")
    return [f"{time_s:.6f}", r.local_port, r.remote_port, STATES.get(r.state, r.state),
            r.cc or "", i.get("ca_state", ""), i.get("snd_cwnd", ""), i.get("snd_ssthresh", ""),
            i.get("rtt", ""), i.get("rttvar", ""), i.get("min_rtt", ""), i.get("unacked", ""),
            i.get("sacked", ""), i.get("lost", ""), i.get("retrans", ""),
            "" if inflight(i) is None else inflight(i), i.get("delivery_rate", ""),
            i.get("app_limited_flags", 0) & 1 if i else "", i.get("pacing_rate", ""),
            i.get("bytes_acked", ""), i.get("bytes_sent", ""), i.get("delivered", ""),
            i.get("total_retrans", ""), i.get("busy_time", ""), i.get("rwnd_limited", ""),
            i.get("sndbuf_limited", ""), i.get("snd_wnd", ""), *bbr]


def sample(dst: str, interval_s: float, out: str, for_s: float) -> int:
    stop = []
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, lambda *_: stop.append(True))
    diag = SockDiag()
    samples = 0
    with open(out, "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(COLUMNS)
        f.flush()
        start = time.monotonic()
        next_at, flush_at = start, start + FLUSH_EVERY_S
        while not stop and time.monotonic() - start < for_s:
            now = time.monotonic()
            for record in diag.dump():
                if record.remote == dst:
                    writer.writerow(row(now, record))
            samples += 1
            if now >= flush_at:
                f.flush()
                flush_at = now + FLUSH_EVERY_S
            next_at += interval_s
            wait = next_at - time.monotonic()
            if wait > 0:
                time.sleep(wait)
            else:  # behind (the machine was busy): the next sample now, the schedule from here
                next_at = time.monotonic()
    diag.close()
    return samples


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dst", required=True, help="the remote IPv4 address to sample")
    parser.add_argument("--interval-ms", type=float, required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--for-s", type=float, required=True, help="stop after this long")
    args = parser.parse_args(argv)
    if not 1 <= args.interval_ms <= 10_000 or not 0 < args.for_s <= 86_400:
        parser.error("--interval-ms 1..10000 and --for-s up to a day")
    samples = sample(args.dst, args.interval_ms / 1000.0, args.out, args.for_s)
    print(f"{samples} samples", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
