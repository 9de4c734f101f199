"""Reading the congestion control back from `ss -tin`."""
from schemes.tcp import _cc_from_ss

SS = """State Recv-Q Send-Q Local Address:Port Peer Address:Port Process
ESTAB 0      0      10.0.0.1:40000     10.0.0.2:5201
\t cubic wscale:7,7 rto:204 rtt:0.1/0.05 mss:1448 cwnd:10 bytes_sent:180 bytes_acked:181 segs_out:5
ESTAB 0      127424 10.0.0.1:40002     10.0.0.2:5201
\t ts sack bpf_vegas wscale:7,7 rto:244 rtt:43.5/1.2 mss:1448 cwnd:38 bytes_sent:9812345 \
bytes_acked:9700001
"""


def test_the_data_connection_not_the_control_one_is_read() -> None:
    assert _cc_from_ss(SS) == "bpf_vegas"


def test_no_connection_gives_none() -> None:
    assert _cc_from_ss("State Recv-Q Send-Q\n") is None


# What a stalled start looks like: the data connection (bound to --cport 24178) has sent only
# iperf3's 37-byte cookie, and the control connection has acked one byte more.
EARLY = """State Recv-Q Send-Q Local Address:Port  Peer Address:PortProcess
ESTAB 1      0           10.0.0.1:57856     10.0.0.2:5201
\t bbr wscale:9,9 rto:248 rtt:45.9/18.2 mss:1448 cwnd:11 bytes_sent:37 bytes_acked:38 segs_out:4
ESTAB 0      0           10.0.0.1:24178     10.0.0.2:5201
\t bpf_vegas wscale:9,9 rto:252 rtt:50.9/19.7 mss:1448 cwnd:11 bytes_sent:37 bytes_acked:37
"""


def test_the_data_connection_is_found_by_its_port_even_before_data_flows() -> None:
    assert _cc_from_ss(EARLY, data_port=24178) == "bpf_vegas"
    # Without the port, the busiest connection is a guess, and here it is the wrong one.
    assert _cc_from_ss(EARLY) == "bbr"


def test_a_data_port_missing_from_the_sample_gives_none() -> None:
    assert _cc_from_ss(EARLY, data_port=24999) is None
    assert _cc_from_ss(SS, data_port=40002) == "bpf_vegas"


# The server's side of iperf3 --bidir (client ports 20555 forward, 20556 reverse): the reverse
# flow's sender is the server's connection to the client's second port.
SERVER_BIDIR = """State Recv-Q Send-Q Local Address:Port Peer Address:Port Process
ESTAB 0       12076104 [::ffff:10.9.0.2]:5201 [::ffff:10.9.0.1]:20556
\t reno wscale:9,9 rto:204 rtt:0.198/0.118 mss:1448 cwnd:433 bytes_sent:2772188800 \
bytes_acked:2771106744
ESTAB 3877232 0        [::ffff:10.9.0.2]:5201 [::ffff:10.9.0.1]:20555
\t cubic wscale:9,9 rto:204 rtt:0.017/0.008 mss:1448 cwnd:10 bytes_received:742151117
ESTAB 0       0        [::ffff:10.9.0.2]:5201 [::ffff:10.9.0.1]:50942
\t bbr wscale:9,9 rto:204 bytes_sent:4 bytes_acked:4
"""


def test_the_reverse_flow_is_read_by_both_its_ports() -> None:
    assert _cc_from_ss(SERVER_BIDIR, 5201, peer_port=20556) == "reno"
    assert _cc_from_ss(SERVER_BIDIR, 5201, peer_port=20555) == "cubic"
    assert _cc_from_ss(SERVER_BIDIR, 5201, peer_port=20999) is None
    assert _cc_from_ss(SERVER_BIDIR) == "reno"  # ports unknown: the busiest sender
