"""The switched path: one TCP transfer through Open vSwitch under an OpenFlow controller that
drops chosen segments, then a fixed-rate bottleneck. kind.py plans it, config.py checks the
path's parameters, network.py builds it, measure.py measures it, transfer_run.py (with
drop_check.py and recovery_entry.py) reads its artifacts."""
