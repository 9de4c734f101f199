"""The two kinds of refusal, and the exit status each means.

Every refusal in the project derives from one of them, so the command line
catches exactly these two and prints one line, never a traceback:

- `UsageError` (exit 2): the request itself is wrong: an unknown name, a value
  out of its range, a file that is not what it should be. Asking differently
  fixes it.
- `Unavailable` (exit 3): the request is fine but this machine cannot serve it
  now: not root, a program not built, a kernel feature or package missing. The
  message names what is missing and the fix.

Failures inside a run (the emulator died, a check of what ran failed) are
neither: the run fails with its reason and the matrix goes on.
"""
from __future__ import annotations

EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_UNAVAILABLE, EXIT_INTERRUPTED = 0, 1, 2, 3, 130


class UsageError(ValueError):
    """The request is wrong; the message names the flag, name, value or file, and what is
    accepted."""

    exit_status = EXIT_USAGE


class RunInvalid(RuntimeError):
    """Not a refusal: the run finished but did not measure what was asked (the wrong
    congestion control served, the planned drops did not happen); it fails with this
    reason."""


class Unavailable(RuntimeError):
    """This machine cannot serve the request; the message names what is missing and the
    fix."""

    exit_status = EXIT_UNAVAILABLE
