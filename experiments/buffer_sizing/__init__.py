"""Sizing Router Buffers (Appenzeller, Keslassy, McKeown; SIGCOMM 2004): a router with n
desynchronized long TCP flows needs a buffer of RTT x C / sqrt(n), not the rule of thumb's
RTT x C. Docs: docs/buffer-sizing.md."""
from __future__ import annotations

from experiments.buffer_sizing.sizing import BufferSizing

PAPER = "Sizing Router Buffers (Appenzeller, Keslassy, McKeown; SIGCOMM 2004)"
EXPERIMENTS = (BufferSizing,)
