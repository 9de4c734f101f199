// Real-time scheduling for a timing loop (the link emulator's, the CPU probe's).
#pragma once

#include <string>

namespace netrepro {

// Runs the calling thread under SCHED_FIFO at `priority`, so that set-up and teardown of other
// runs (Python, `ip`, namespace cleanup) cannot delay a scheduled delivery. Returns what the
// thread got, e.g. "SCHED_FIFO priority 10", or "SCHED_OTHER (SCHED_FIFO refused: <why>)";
// never throws: the lateness the emulator measures shows the cost of a refusal.
std::string request_realtime(int priority);

// Runs the calling thread on `cpu` only (other threads keep their CPUs). Returns "" when
// pinned, else why not, e.g. "cannot pin to CPU 7: Invalid argument".
std::string pin_to_cpu(int cpu);

}  // namespace netrepro
