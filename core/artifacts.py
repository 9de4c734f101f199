"""Names both sides of an artifact agree on: the ports the endpoints use and the files a
run leaves, written by the measurement code and read by the analysis."""
from __future__ import annotations

IPERF_PORT = 5201  # iperf3's server: the TCP schemes' data flows go to it

REVERSE_DIR = "reverse"  # a two-way TCP run's reverse flow: its tcp_probe recording, in here
