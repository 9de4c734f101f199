"""A controller submitted to the contest: checked, built and run as untrusted code.

A submission is a student's `controller.hh` + `controller.cc` written against one
of three public API generations of the datagrump framework (docs/contest.md):

  1 keithw/datagrump (2013):  packet_was_sent(seq, send_ts); Network::timestamp()
  2 keithw/sourdough before after_timeout:  datagram_was_sent(seq, send_ts);
    timestamp.hh's timestamp_ms()
  3 keithw/sourdough today:  datagram_was_sent(seq, send_ts, after_timeout)

The header is read before anything is compiled; a class that matches none of
them is refused naming the declaration that differs. The sources compile
unchanged: our own `timestamp.hh` (native/grump/student/compat) and an adapter
(native/grump/student/student_adapter.cc) turn the class into grump-sender's
controller "student". The build and each trial's sender run in boxes of their own,
with limits. The scheme `submission` (not listed; one parameter, the sources' hash)
runs a built submission like any contest controller, so the run's id includes the
hash: changed code is a new run.

Modules: `api.py` (which API generation a header follows), `intake.py` (the two files
read without following links or reading past the limit), `sources.py` (read once,
hashed), `build.py` (compiled and linked in a box; the built binaries pruned), `scheme.py`
(the `submission` scheme), `box.py` with `box_users.py`, `box_cgroup.py`,
`box_procs.py`, `box_seccomp.py` (its system-call filter), `box_keys.py` (its keyrings),
`box_egress.py` (what it may send) and `box_check.py` (the box every build and trial runs
in), `limits.py` (the limits a box holds, and the link's queue for it), `hosting.py`
(whether this machine may host a contest: its cgroups), `output_cap.py` and
`untrusted_text.py` (what a submission writes, capped, cut and escaped).
"""
