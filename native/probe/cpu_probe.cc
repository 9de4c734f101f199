#include "cpu_probe.hh"

#include <pthread.h>
#include <sched.h>
#include <sys/prctl.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "clock.hh"
#include "host_timing.hh"
#include "scheduling.hh"
#include "system_error.hh"

namespace netrepro {

CpuProbe::CpuProbe(ProbeOptions options) : options_(options) {
  stalls_.reserve(options_.max_events);
}

void CpuProbe::run_cpu(CpuRecord& record, std::atomic<int>& started, uint64_t until_us) {
  const std::string pinned = pin_to_cpu(record.cpu);
  // Under SCHED_OTHER (refused, or asked) the default 50-us timer slack would add to every
  // wake-up; real-time threads have none anyway.
  ::prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
  record.scheduling = options_.priority > 0 ? request_realtime(options_.priority)
                                            : std::string("SCHED_OTHER (--priority 0)");
  // Not fatal: the thread still measures, and off_cpu_wakeups shows where it ran.
  if (!pinned.empty()) record.scheduling += ", " + pinned;
  started.fetch_add(1);
  if (options_.spin) {
    spin_cpu(record, until_us);
    return;
  }
  uint64_t deadline = monotonic_us() + options_.period_us;
  while (!stopping()) {
    sleep_until_us(deadline);
    const uint64_t woke = monotonic_us();
    record_wakeup(record, deadline, woke, ::sched_getcpu());
    if (until_us != 0 && woke >= until_us) break;
    // From the wake-up, not the missed deadline: no burst of catch-up wake-ups after a stall.
    deadline = woke + options_.period_us;
  }
}

void CpuProbe::spin_cpu(CpuRecord& record, uint64_t until_us) {
  // Checks for the stop every 2^16 reads: the atomic load would be most of a read's cost.
  uint64_t last = monotonic_us();
  for (uint64_t i = 1; !(i % 65536 == 0 && stopping()); ++i) {
    const uint64_t now = monotonic_us();
    record_gap(record, last, now);
    last = now;
    if (until_us != 0 && now >= until_us) break;
  }
}

void CpuProbe::record_gap(CpuRecord& record, uint64_t before_us, uint64_t after_us) {
  const uint64_t gap = after_us - before_us;
  if (gap <= options_.report_us) return;
  ++record.spin_gaps_over;
  record.spin_gap_us += gap;
  record.spin_excess_us += gap - options_.report_us;
  record.lateness.add_interval(before_us, after_us);
}

void CpuProbe::record_wakeup(CpuRecord& record, uint64_t deadline_us, uint64_t woke_us,
                             int on_cpu) {
  const uint64_t late = woke_us > deadline_us ? woke_us - deadline_us : 0;
  // The first wake-up of the worst lateness keeps its deadline.
  if (record.lateness.count() == 0 || late > record.lateness.max()) {
    record.worst_deadline_us = deadline_us;
  }
  record.lateness.add_interval(deadline_us, woke_us);
  if (on_cpu != record.cpu) ++record.off_cpu_wakeups;
  if (late <= options_.report_us) return;
  std::lock_guard<std::mutex> lock(mutex_);
  if (stalls_.size() < options_.max_events) {
    stalls_.push_back(Stall{record.cpu, deadline_us, late});  // reserved: no allocation
  } else {
    ++dropped_;
  }
}

std::vector<Stall> CpuProbe::stalls() const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<Stall> sorted = stalls_;
  std::sort(sorted.begin(), sorted.end(), [](const Stall& a, const Stall& b) {
    return a.deadline_us != b.deadline_us ? a.deadline_us < b.deadline_us : a.cpu < b.cpu;
  });
  return sorted;
}

uint64_t CpuProbe::stalls_dropped() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return dropped_;
}

JsonObject CpuProbe::json(const std::vector<CpuRecord>& cpus, uint64_t start_us,
                          uint64_t end_us) const {
  // Keyed by CPU number, and the stalls as parallel arrays: the shape analysis/cpu_probe.py
  // reads (the JSON writer keeps objects and arrays of numbers).
  JsonObject per_cpu;
  for (const CpuRecord& r : cpus) {
    JsonObject one;
    one.add("wakeups", r.lateness.count())
        .add("lateness_us", HostTiming::percentiles_json(r.lateness))
        .add("worst_deadline_us", r.worst_deadline_us)
        .add("off_cpu_wakeups", r.off_cpu_wakeups);
    if (options_.spin) {
      // `wakeups` and `lateness_us` then count only the gaps over report_us.
      one.add("spin", JsonObject()
                          .add("gaps_over_report", r.spin_gaps_over)
                          .add("gap_us", r.spin_gap_us)
                          .add("excess_us", r.spin_excess_us));
    }
    per_cpu.add(std::to_string(r.cpu), one);
  }
  std::vector<uint64_t> cpu, deadline, late;
  for (const Stall& s : stalls()) {
    cpu.push_back(static_cast<uint64_t>(s.cpu));
    deadline.push_back(s.deadline_us);
    late.push_back(s.late_us);
  }
  JsonObject head;
  head.add("program", "netrepro-cpu-probe");
  // Only with --spin, so the periodic probe's stats stay as analysis/cpu_probe.py reads them.
  if (options_.spin) head.add("spin", true);
  return head.add("period_us", options_.period_us)
      .add("report_us", options_.report_us)
      .add("priority", options_.priority)
      .add("scheduling", scheduling_summary(cpus))
      .add("start_us", start_us)
      .add("end_us", end_us)
      .add("cpus", per_cpu)
      .add("stalls", JsonObject()
                         .add_array("cpu", cpu)
                         .add_array("deadline_us", deadline)
                         .add_array("late_us", late))
      .add("stalls_dropped", stalls_dropped());
}

std::string scheduling_summary(const std::vector<CpuRecord>& cpus) {
  std::vector<std::string> distinct;
  for (const CpuRecord& r : cpus) {
    if (std::find(distinct.begin(), distinct.end(), r.scheduling) == distinct.end()) {
      distinct.push_back(r.scheduling);
    }
  }
  std::string joined;
  for (const std::string& s : distinct) joined += (joined.empty() ? "" : "; ") + s;
  return joined;
}

std::vector<int> allowed_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (::sched_getaffinity(0, sizeof(set), &set) != 0) {
    throw SystemError("sched_getaffinity (the CPUs to probe)", errno);
  }
  std::vector<int> cpus;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (CPU_ISSET(cpu, &set)) cpus.push_back(cpu);
  }
  return cpus;
}

}  // namespace netrepro
