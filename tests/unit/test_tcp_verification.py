"""Reading the congestion control back from `ss -tin`."""
from schemes.tcp import _cc_from_ss

SS = """State Recv-Q Send-Q Local Address:Port Peer Address:Port Process
ESTAB 0      0      10.0.0.1:40000     10.0.0.2:5201
\t cubic wscale:7,7 rto:204 rtt:0.1/0.05 mss:1448 cwnd:10 bytes_sent:180 bytes_acked:181 segs_out:5
ESTAB 0      127424 10.0.0.1:40002     10.0.0.2:5201
\t ts sack bpf_vegas wscale:7,7 rto:244 rtt:43.5/1.2 mss:1448 cwnd:38 bytes_sent:9812345 bytes_acked:9700001
"""


def test_the_data_connection_not_the_control_one_is_read() -> None:
    assert _cc_from_ss(SS) == "bpf_vegas"


def test_no_connection_gives_none() -> None:
    assert _cc_from_ss("State Recv-Q Send-Q\n") is None
