"""Names both sides of an artifact agree on: the ports the endpoints use and the files a
run leaves, written by the measurement code and read by the analysis."""
from __future__ import annotations

IPERF_PORT = 5201  # iperf3's server: the TCP schemes' data flows go to it
TRANSFER_PORT = 5001  # the PRR experiment's one transfer
GRUMP_PORT = 9000  # the contest's datagram receiver

REVERSE_DIR = "reverse"  # a two-way TCP run's reverse flow: its tcp_probe recording, in here
SENDER_PCAP = "sender.pcap"  # a PRR run's captures on both hosts
RECEIVER_PCAP = "receiver.pcap"
