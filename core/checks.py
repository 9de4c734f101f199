"""One line of `./repro doctor`: a prerequisite, whether it holds, and the fix.

Every layer that needs something of the machine says so with these (a kind, a scheme
family, a paper); app/commands/doctor.py only prints them."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Check:
    name: str
    ok: bool
    detail: str
    fix: str = ""
    required: bool = True

    def line(self) -> str:
        tag = "ok" if self.ok else ("FAIL" if self.required else "warn")
        text = f"[{tag:>4}] {self.name}: {self.detail}"
        if not self.ok and self.fix:
            text += f"\n       fix: {self.fix}"
        return text


# What most fixes say: setup installs and builds everything.
INSTALL = "run ./setup/install.sh as root"
