"""The per-packet queue log of a trace link: the run option that asks for it, and its files.

Off unless asked for. A run whose RunSpec has the option `queue_log=True` gets, beside its
mahimahi logs, one line per packet per direction (native/link/README.md, "Outputs"):
`data-queue.log` (the data direction) and `ack-queue.log`; analysis/queue_log.py reads them.
Kept apart from TraceLink so an experiment can ask for it without importing Mininet.
"""
from __future__ import annotations

OPTION = "queue_log"
DATA_FILE = "data-queue.log"
ACK_FILE = "ack-queue.log"
