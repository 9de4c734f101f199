"""The trace path: one sender, netrepro-link playing a trace (or a fixed rate) each way, one
receiver. kind.py plans it, network.py builds it, measure.py measures it, metrics.py reads
its artifacts."""
