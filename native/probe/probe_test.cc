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
  probe.record_wakeup(record, 7'000, 9'000, 1);      // exactly the limit: not listed
  probe.record_wakeup(record, 30'000, 490'000, 1);   // 460 ms late
  probe.record_wakeup(record, 10'000, 13'000, 0);    // 3 ms late, on the wrong CPU
  probe.record_wakeup(record, 600'000, 650'000, 1);  // over the limit of two: counted only
  const auto stalls = probe.stalls();
  ASSERT_EQ(stalls.size(), 2u);
  EXPECT_EQ(stalls[0].deadline_us, 10'000u);  // sorted by deadline
  EXPECT_EQ(stalls[0].late_us, 3'000u);
  EXPECT_EQ(stalls[1].deadline_us, 30'000u);
  EXPECT_EQ(stalls[1].late_us, 460'000u);
  EXPECT_EQ(probe.stalls_dropped(), 1u);
  EXPECT_EQ(record.lateness.count(), 5u);
  EXPECT_EQ(record.lateness.max(), 460'000u);
  EXPECT_EQ(record.worst_deadline_us, 30'000u);
  EXPECT_EQ(record.off_cpu_wakeups, 1u);
}

TEST(CpuProbe, WorstDeadlineIsTheFirstOfTheWorstAndStallsSortAcrossCpus) {
  CpuProbe probe(ProbeOptions{});
  CpuRecord a, b;
  a.cpu = 0;
  b.cpu = 1;
  probe.record_wakeup(a, 1'000, 1'000, 0);  // on time: still the worst so far
  EXPECT_EQ(a.worst_deadline_us, 1'000u);
  probe.record_wakeup(b, 50'000, 60'000, 1);
  probe.record_wakeup(a, 40'000, 45'000, 0);
  probe.record_wakeup(a, 80'000, 85'000, 0);  // as late: the first keeps it
  probe.record_wakeup(b, 40'000, 43'000, 1);  // same deadline as a's: CPU 0 first
  EXPECT_EQ(a.worst_deadline_us, 40'000u);
  EXPECT_EQ(b.worst_deadline_us, 50'000u);
  const auto stalls = probe.stalls();
  ASSERT_EQ(stalls.size(), 4u);
  EXPECT_EQ(stalls[0].cpu, 0);
  EXPECT_EQ(stalls[1].cpu, 1);
  EXPECT_EQ(stalls[1].deadline_us, 40'000u);
  EXPECT_EQ(stalls[2].deadline_us, 50'000u);
  EXPECT_EQ(stalls[3].deadline_us, 80'000u);
}

TEST(CpuProbe, StatsHaveTheirKeysInOrderCpusByNumberAndStallsAsArrays) {
  CpuProbe probe(ProbeOptions{});
  CpuRecord a, b;
  a.cpu = 0;
  b.cpu = 1;
  a.scheduling = b.scheduling = "SCHED_FIFO priority 11";
  probe.record_wakeup(a, 1'000, 1'040, 0);
  probe.record_wakeup(b, 1'000, 9'000, 1);
  EXPECT_EQ(probe.json({a, b}, 100, 200).str(),
            "{\n"
            "  \"program\": \"netrepro-cpu-probe\",\n"
            "  \"period_us\": 10000,\n"
            "  \"report_us\": 2000,\n"
            "  \"priority\": 11,\n"
            "  \"scheduling\": \"SCHED_FIFO priority 11\",\n"
            "  \"start_us\": 100,\n"
            "  \"end_us\": 200,\n"
            "  \"cpus\": {\n"
            "    \"0\": {\n"
            "      \"wakeups\": 1,\n"
            "      \"lateness_us\": {\n"
            "        \"p50\": 40,\n"
            "        \"p90\": 40,\n"
            "        \"p99\": 40,\n"
            "        \"max\": 40,\n"
            "        \"count\": 1\n"
            "      },\n"
            "      \"worst_deadline_us\": 1000,\n"
            "      \"off_cpu_wakeups\": 0\n"
            "    },\n"
            "    \"1\": {\n"
            "      \"wakeups\": 1,\n"
            "      \"lateness_us\": {\n"
            "        \"p50\": 8000,\n"
            "        \"p90\": 8000,\n"
            "        \"p99\": 8000,\n"
            "        \"max\": 8000,\n"
            "        \"count\": 1\n"
            "      },\n"
            "      \"worst_deadline_us\": 1000,\n"
            "      \"off_cpu_wakeups\": 0\n"
            "    }\n"
            "  },\n"
            "  \"stalls\": {\n"
            "    \"cpu\": [1],\n"
            "    \"deadline_us\": [1000],\n"
            "    \"late_us\": [8000]\n"
            "  },\n"
            "  \"stalls_dropped\": 0\n"
            "}\n");
}

TEST(CpuProbe, SchedulingNamesEachDistinctOneOnce) {
  std::vector<CpuRecord> cpus(3);
  cpus[0].scheduling = "SCHED_FIFO priority 11";
  cpus[1].scheduling = "SCHED_OTHER (SCHED_FIFO refused: Operation not permitted)";
  cpus[2].scheduling = "SCHED_FIFO priority 11";
  EXPECT_EQ(scheduling_summary(cpus),
            "SCHED_FIFO priority 11; SCHED_OTHER (SCHED_FIFO refused: Operation not permitted)");
  cpus.resize(1);
  EXPECT_EQ(scheduling_summary(cpus), "SCHED_FIFO priority 11");
  EXPECT_NE(CpuProbe(ProbeOptions{}).json({}, 0, 0).str().find("\"cpu\": []"),
            std::string::npos);
}

TEST(CpuProbe, ARealLoopOnThisCpuCountsItsWakeups) {
  ProbeOptions options;
  options.period_us = 1000;
  options.priority = 0;  // tests need no privileges
  CpuProbe probe(options);
  CpuRecord record;
  record.cpu = ::sched_getcpu();
  ASSERT_GE(record.cpu, 0);
  std::atomic<int> started{0};
  // On a thread of its own: run_cpu pins the thread it runs on.
  std::thread loop([&] { probe.run_cpu(record, started, monotonic_us() + 50'000); });
  loop.join();
  EXPECT_EQ(started.load(), 1);
  EXPECT_GT(record.lateness.count(), 0u);
  EXPECT_LE(record.lateness.count(), 51u);  // no catch-up bursts
  EXPECT_EQ(record.off_cpu_wakeups, 0u);
  EXPECT_EQ(record.scheduling, "SCHED_OTHER (--priority 0)");
  EXPECT_EQ(record.lateness.reversed(), 0u);  // never woke before its deadline
}

TEST(CpuProbe, StopEndsTheLoopAtItsNextWakeup) {
  ProbeOptions options;
  options.period_us = 1000;
  options.priority = 0;
  CpuProbe probe(options);
  CpuRecord record;
  record.cpu = ::sched_getcpu();
  std::atomic<int> started{0};
  std::thread loop([&] { probe.run_cpu(record, started); });
  while (started.load() == 0) sleep_until_us(monotonic_us() + 1000);
  sleep_until_us(monotonic_us() + 10'000);
  probe.stop();
  loop.join();
  EXPECT_GT(record.lateness.count(), 0u);
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
TEST(CpuProbe, SpinCountsOnlyGapsOverTheReportLimit) {
  ProbeOptions o;
  o.spin = true;
  o.report_us = 12;
  CpuProbe probe(o);
  CpuRecord r;
  r.cpu = 0;
  probe.record_gap(r, 100, 101);  // an ordinary read: nothing
  probe.record_gap(r, 200, 212);  // exactly the limit: nothing
  probe.record_gap(r, 300, 340);  // 40 us taken away: 28 beyond the limit
  probe.record_gap(r, 400, 413);  // 13: 1 beyond
  EXPECT_EQ(r.spin_gaps_over, 2u);
  EXPECT_EQ(r.spin_gap_us, 53u);
  EXPECT_EQ(r.spin_excess_us, 29u);
  EXPECT_EQ(r.lateness.count(), 2u);
  EXPECT_EQ(r.lateness.max(), 40u);
}

}  // namespace netrepro
