"""What the teacher set: per-team limits, the close time, and when the testing board shows.

A refusal says when the team may submit again, so a page and the API can both tell it.
"""
from __future__ import annotations

import time
from dataclasses import dataclass

HOUR_S = 3600.0


@dataclass(frozen=True)
class Policy:
    per_hour: int = 6  # accepted submissions per team in any hour
    in_flight: int = 1  # queued or running at once, per team
    close_at: float | None = None  # Unix time after which nothing is accepted
    reveal_testing: bool = False  # show the testing board before the close

    def closed(self, now: float) -> bool:
        return self.close_at is not None and now >= self.close_at

    def testing_shown(self, now: float) -> bool:
        """The testing board stays hidden until the close, as the contest's did."""
        return self.reveal_testing or self.closed(now)


@dataclass(frozen=True)
class Refusal:
    status: int  # the HTTP status that says it
    message: str
    retry_at: float | None = None  # when the team may submit again, if ever

    def text(self) -> str:
        if self.retry_at is None:
            return self.message
        return f"{self.message}; submit again after {utc(self.retry_at)}"


def utc(t: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(t))


def check(policy: Policy, now: float, in_flight: int, last_hour: list[float]) -> Refusal | None:
    """None when a team with `in_flight` jobs, accepted at `last_hour` (times within the
    hour before now), may submit now."""
    if policy.closed(now):
        assert policy.close_at is not None
        return Refusal(403, f"the contest closed at {utc(policy.close_at)}: no more "
                       "submissions are taken")
    if in_flight >= policy.in_flight:
        return Refusal(429, f"{in_flight} submission(s) of your team are queued or running "
                       f"(at most {policy.in_flight} at once): submit again when it is scored")
    if len(last_hour) >= policy.per_hour:
        oldest = sorted(last_hour)[len(last_hour) - policy.per_hour]
        return Refusal(429, f"at most {policy.per_hour} submission(s) per hour per team",
                       retry_at=oldest + HOUR_S)
    return None
