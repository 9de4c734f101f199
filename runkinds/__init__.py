"""The run kinds: one per kind of network a run is measured on (core/run_kind.py)."""
