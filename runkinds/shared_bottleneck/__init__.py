"""The shared bottleneck: N long TCP flows into one switch port. kind.py plans a run,
options.py checks its options, network.py builds it, measure.py measures it, metrics.py
reads its per-packet queue log and the flows' records."""
