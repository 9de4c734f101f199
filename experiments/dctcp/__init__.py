"""Data Center TCP (Alizadeh et al.; SIGCOMM 2010), Figures 1 and 13, as Mininet-HiFi
(Handigol et al.; CoNEXT 2012) reproduced them: the queue at a switch port shared by long
flows, TCP against DCTCP. Docs: docs/dctcp.md."""
from __future__ import annotations

from experiments.dctcp.queue import DctcpQueue

PAPER = "Data Center TCP (Alizadeh et al.; SIGCOMM 2010), as Mininet-HiFi reproduced it"
EXPERIMENTS = (DctcpQueue,)
