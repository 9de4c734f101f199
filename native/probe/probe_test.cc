#include <gtest/gtest.h>
#include <sched.h>

#include <atomic>
#include <string>
#include <thread>

#include "clock.hh"
#include "cpu_probe.hh"

namespace netrepro {
namespace {

TEST(CpuProbe, ListsOnlyLateWakeupsAndCountsThoseOverTheLimit) {
  ProbeOptions options;
  options.report_us = 2000;
  options.max_events = 2;
  CpuProbe probe(options);
  CpuRecord record;
  record.cpu = 1;
  probe.record_wakeup(record, 5'000, 5'100, 1);      // on time: not listed
  probe.record_wakeup(record, 30'000, 490'000, 1);   // 460 ms late
  probe.record_wakeup(record, 10'000, 13'000, 0);    // 3 ms late, on the wrong CPU
  probe.record_wakeup(record, 600'000, 650'000, 1);  // over the limit of two: counted only
  const auto stalls = probe.stalls();
  ASSERT_EQ(stalls.size(), 2u);
  EXPECT_EQ(stalls[0].deadline_us, 10'000u);  // sorted by deadline
  EXPECT_EQ(stalls[0].late_us, 3'000u);
  EXPECT_EQ(stalls[1].late_us, 460'000u);
  EXPECT_EQ(probe.stalls_dropped(), 1u);
  EXPECT_EQ(record.lateness.count(), 4u);
  EXPECT_EQ(record.lateness.max(), 460'000u);
  EXPECT_EQ(record.worst_deadline_us, 30'000u);
  EXPECT_EQ(record.off_cpu_wakeups, 1u);
}

TEST(CpuProbe, StatsNameEveryCpuAndTheStallsAsArrays) {
  CpuProbe probe(ProbeOptions{});
  CpuRecord a, b;
  a.cpu = 0;
  a.scheduling = b.scheduling = "SCHED_FIFO priority 11";
  b.cpu = 1;
  probe.record_wakeup(b, 1'000, 9'000, 1);
  const std::string json = probe.json({a, b}, 100, 200).str();
  for (const char* key : {"\"program\": \"netrepro-cpu-probe\"", "\"period_us\": 20000",
                          "\"scheduling\": \"SCHED_FIFO priority 11\"", "\"0\": {", "\"1\": {",
                          "\"worst_deadline_us\": 1000", "\"stalls_dropped\": 0"}) {
    EXPECT_NE(json.find(key), std::string::npos) << key << " in " << json;
  }
  EXPECT_NE(json.find("\"late_us\": [8000]"), std::string::npos) << json;
}

TEST(CpuProbe, ARealLoopOnThisCpuCountsItsWakeups) {
  ProbeOptions options;
  options.period_us = 1000;
  options.priority = 0;  // tests need no privileges
  CpuProbe probe(options);
  CpuRecord record;
  record.cpu = ::sched_getcpu();
  std::atomic<int> started{0};
  // On a thread of its own: run_cpu pins the thread it runs on.
  std::thread loop([&] { probe.run_cpu(record, started, monotonic_us() + 50'000); });
  loop.join();
  EXPECT_EQ(started.load(), 1);
  EXPECT_GT(record.lateness.count(), 10u);
  EXPECT_EQ(record.off_cpu_wakeups, 0u);
  EXPECT_EQ(record.scheduling, "SCHED_OTHER (asked)");
}

TEST(CpuProbe, AllowedCpusAreThisProcesssAffinity) {
  cpu_set_t set;
  CPU_ZERO(&set);
  ASSERT_EQ(::sched_getaffinity(0, sizeof(set), &set), 0);
  const auto cpus = allowed_cpus();
  ASSERT_EQ(cpus.size(), static_cast<size_t>(CPU_COUNT(&set)));
  for (int cpu : cpus) EXPECT_TRUE(CPU_ISSET(cpu, &set)) << cpu;
}

}  // namespace
}  // namespace netrepro
