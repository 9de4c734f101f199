// One thread per CPU, pinned to it under SCHED_FIFO, waking on a fixed period: how late each
// wake-up came is how long that CPU was not there for a real-time thread (the hypervisor did
// not run it, or it was stuck in the kernel). Times are CLOCK_MONOTONIC microseconds, the
// clock of the link emulator's lateness files, so a caller can line the two up.
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "json_writer.hh"
#include "latency_histogram.hh"

namespace netrepro {

struct ProbeOptions {
  uint64_t period_us = 10000;
  uint64_t report_us = 2000;  // wake-ups later than this are listed one by one
  int priority = 11;          // one above the link emulator's; 0: stay SCHED_OTHER
  uint64_t max_events = 1000;  // listed wake-ups, all CPUs together; the rest are counted
  // Read the clock without sleeping instead of waking on a period: every gap between two
  // reads longer than report_us is a time the CPU was taken away from a thread that never
  // gave it up (the floor under any emulator's departure timing on this machine).
  bool spin = false;
};

// One late wake-up: the CPU, the deadline it was due at, and how late it came.
struct Stall {
  int cpu;
  uint64_t deadline_us;
  uint64_t late_us;
};

// What one CPU's thread saw; only that thread writes it until it is joined.
struct CpuRecord {
  int cpu = -1;
  LatencyHistogram lateness;
  uint64_t worst_deadline_us = 0;  // the deadline of its worst (latest-coming) wake-up
  uint64_t off_cpu_wakeups = 0;    // woke on another CPU: the pinning did not hold
  std::string scheduling;          // as request_realtime() said
  // --spin: gaps between clock reads longer than report_us, and their total length.
  uint64_t spin_gaps_over = 0;
  uint64_t spin_gap_us = 0;
  uint64_t spin_excess_us = 0;  // the part of those gaps beyond report_us
};

class CpuProbe {
 public:
  // Reserves room for max_events stalls, so the wake path never allocates.
  explicit CpuProbe(ProbeOptions options);

  // One CPU's loop, on the calling thread: pins it to `record.cpu`, asks for SCHED_FIFO and
  // records wake-ups until stop() (or `until_us`, 0: none). `started` is incremented once the
  // thread is pinned and scheduled. Throws SystemError if the clock fails.
  void run_cpu(CpuRecord& record, std::atomic<int>& started, uint64_t until_us = 0);

  // One wake-up at `woke_us`, due at `deadline_us`, on CPU `on_cpu` (the loop's bookkeeping,
  // apart so it can be tested without a clock).
  void record_wakeup(CpuRecord& record, uint64_t deadline_us, uint64_t woke_us, int on_cpu);
  // --spin: one gap between two clock reads (apart, as above).
  void record_gap(CpuRecord& record, uint64_t before_us, uint64_t after_us);

  void stop() { stopping_.store(true, std::memory_order_relaxed); }
  bool stopping() const { return stopping_.load(std::memory_order_relaxed); }

  // The stats (native/probe/README.md): options, scheduling, each CPU's record by its number
  // and the listed stalls by deadline. Call once the threads are joined.
  JsonObject json(const std::vector<CpuRecord>& cpus, uint64_t start_us,
                  uint64_t end_us) const;

  // The listed stalls, by deadline (then CPU).
  std::vector<Stall> stalls() const;
  uint64_t stalls_dropped() const;

 private:
  void spin_cpu(CpuRecord& record, uint64_t until_us);

  ProbeOptions options_;
  std::atomic<bool> stopping_{false};
  mutable std::mutex mutex_;  // guards the two below; taken only for a late wake-up
  std::vector<Stall> stalls_;
  uint64_t dropped_ = 0;
};

// "SCHED_FIFO priority 11", or the distinct schedulings of `cpus` joined by "; ".
std::string scheduling_summary(const std::vector<CpuRecord>& cpus);

// The CPUs this process may run on (its affinity mask), in order.
std::vector<int> allowed_cpus();

}  // namespace netrepro
