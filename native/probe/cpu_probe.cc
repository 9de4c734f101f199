#include "cpu_probe.hh"

#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "clock.hh"
#include "host_timing.hh"
#include "scheduling.hh"
#include "system_error.hh"

namespace netrepro {

namespace {

std::string pin_to(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  const int error = ::pthread_setaffinity_np(::pthread_self(), sizeof(set), &set);
  return error == 0 ? "" : std::string("cannot pin to CPU ") + std::to_string(cpu) + ": " +
                               std::strerror(error);
}

}  // namespace

void CpuProbe::run_cpu(CpuRecord& record, std::atomic<int>& started, uint64_t until_us) {
  const std::string pinned = pin_to(record.cpu);
  record.scheduling = options_.priority > 0 ? request_realtime(options_.priority)
                                            : std::string("SCHED_OTHER (asked)");
  if (!pinned.empty()) record.scheduling += "; " + pinned;
  started.fetch_add(1);
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

void CpuProbe::record_wakeup(CpuRecord& record, uint64_t deadline_us, uint64_t woke_us,
                             int on_cpu) {
  const uint64_t late = woke_us > deadline_us ? woke_us - deadline_us : 0;
  if (late >= record.lateness.max()) record.worst_deadline_us = deadline_us;
  record.lateness.add_interval(deadline_us, woke_us);
  if (on_cpu != record.cpu) ++record.off_cpu_wakeups;
  if (late <= options_.report_us) return;
  std::lock_guard<std::mutex> lock(mutex_);
  if (stalls_.size() < options_.max_events) {
    stalls_.push_back(Stall{record.cpu, deadline_us, late});
  } else {
    ++dropped_;
  }
}

std::vector<Stall> CpuProbe::stalls() const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<Stall> sorted = stalls_;
  std::stable_sort(sorted.begin(), sorted.end(), [](const Stall& a, const Stall& b) {
    return a.deadline_us < b.deadline_us;
  });
  return sorted;
}

uint64_t CpuProbe::stalls_dropped() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return dropped_;
}

JsonObject CpuProbe::json(const std::vector<CpuRecord>& cpus, uint64_t start_us,
                          uint64_t end_us) const {
  std::vector<std::string> policies;
  JsonObject per_cpu;
  for (const CpuRecord& r : cpus) {
    if (std::find(policies.begin(), policies.end(), r.scheduling) == policies.end()) {
      policies.push_back(r.scheduling);
    }
    per_cpu.add(std::to_string(r.cpu),
                JsonObject()
                    .add("wakeups", r.lateness.count())
                    .add("lateness_us", HostTiming::percentiles_json(r.lateness))
                    .add("worst_deadline_us", r.worst_deadline_us)
                    .add("off_cpu_wakeups", r.off_cpu_wakeups));
  }
  std::string scheduling;
  for (const std::string& p : policies) scheduling += (scheduling.empty() ? "" : "; ") + p;
  // Parallel arrays: the JSON writer keeps arrays of numbers.
  std::vector<uint64_t> cpu, deadline, late;
  for (const Stall& s : stalls()) {
    cpu.push_back(static_cast<uint64_t>(s.cpu));
    deadline.push_back(s.deadline_us);
    late.push_back(s.late_us);
  }
  return JsonObject()
      .add("program", "netrepro-cpu-probe")
      .add("period_us", options_.period_us)
      .add("report_us", options_.report_us)
      .add("priority", options_.priority)
      .add("scheduling", scheduling)
      .add("start_us", start_us)
      .add("end_us", end_us)
      .add("cpus", per_cpu)
      .add("stalls", JsonObject()
                         .add_array("cpu", cpu)
                         .add_array("deadline_us", deadline)
                         .add_array("late_us", late))
      .add("stalls_dropped", stalls_dropped());
}

std::vector<int> allowed_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (::sched_getaffinity(0, sizeof(set), &set) != 0) {
    throw SystemError("sched_getaffinity", errno);
  }
  std::vector<int> cpus;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (CPU_ISSET(cpu, &set)) cpus.push_back(cpu);
  }
  return cpus;
}

}  // namespace netrepro
