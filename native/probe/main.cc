// netrepro-cpu-probe: one pinned SCHED_FIFO thread per CPU, recording how late each periodic
// wake-up came, until SIGTERM/SIGINT (or --duration-s); then the stats JSON (README.md).
// Exit status: 0 after a stop, 1 on a runtime error, 2 on a bad command line or stats path.
#include <poll.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <atomic>
#include <csignal>
#include <iostream>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "arg_parser.hh"
#include "clock.hh"
#include "cpu_probe.hh"
#include "json_writer.hh"
#include "signal_fd.hh"

using namespace netrepro;

namespace {

constexpr int kUsageError = 2;
// How long the threads may take to pin themselves and start.
constexpr uint64_t kStartTimeoutUs = 5'000'000;

struct Options {
  std::string stats_path;
  std::optional<std::string> ready_path;
  ProbeOptions probe;
  std::optional<double> duration_s;
};

ArgParser parser_for(Options& o) {
  ArgParser parser("netrepro-cpu-probe", "",
                   "  One thread per CPU, pinned, under SCHED_FIFO, waking every period;\n"
                   "  writes how late each CPU's wake-ups came to FILE on SIGTERM/SIGINT.\n");
  parser.text("--stats", "FILE", "stats JSON written at the end", &o.stats_path, Need::Required)
      .text("--ready", "FILE", "written once every CPU's thread runs", &o.ready_path)
      .integer("--period-us", "N", "wake-up period (default 20000)", &o.probe.period_us, 100,
               1'000'000)
      .integer("--report-us", "N", "list wake-ups later than this (default 2000)",
               &o.probe.report_us, 1, 60'000'000)
      .custom("--priority", "N", "SCHED_FIFO priority, 0 to stay SCHED_OTHER (default 11)",
              Need::Optional,
              [&o](const std::string& v) {
                o.probe.priority = static_cast<int>(ArgParser::to_integer("--priority", v, 0, 99));
              })
      .custom("--max-events", "N", "late wake-ups listed, all CPUs (default 1000)",
              Need::Optional,
              [&o](const std::string& v) {
                o.probe.max_events =
                    static_cast<size_t>(ArgParser::to_integer("--max-events", v, 0, 1'000'000));
              })
      .number("--duration-s", "S", "stop by itself after S seconds", &o.duration_s, 0, 1e7);
  return parser;
}

}  // namespace

int main(int argc, char* argv[]) {
  Options options;
  ArgParser parser = parser_for(options);
  if (const auto status = parser.parse_or_exit_status(argc, argv)) return *status;
  try {
    JsonObject::check_writable(options.stats_path);
  } catch (const std::exception& e) {
    std::cerr << "netrepro-cpu-probe: " << e.what() << '\n';
    return kUsageError;
  }
  try {
    // Ends with the run that started it, even if that run is killed outright.
    ::prctl(PR_SET_PDEATHSIG, SIGTERM);
    SignalFd stop;  // before the threads, so they inherit the blocked signals
    const uint64_t start = monotonic_us();
    const uint64_t until =
        options.duration_s ? start + static_cast<uint64_t>(*options.duration_s * 1e6) : 0;
    CpuProbe probe(options.probe);
    std::vector<CpuRecord> records;
    for (int cpu : allowed_cpus()) {
      records.emplace_back();
      records.back().cpu = cpu;
    }
    std::atomic<int> started{0};
    std::vector<std::thread> threads;
    for (CpuRecord& r : records) {
      threads.emplace_back([&probe, &r, &started, until] { probe.run_cpu(r, started, until); });
    }
    while (started.load() < static_cast<int>(records.size())) {
      if (monotonic_us() - start > kStartTimeoutUs) {
        probe.stop();
        for (std::thread& t : threads) t.join();
        std::cerr << "netrepro-cpu-probe: " << started.load() << " of " << records.size()
                  << " CPU threads started within 5 s\n";
        return 1;
      }
      sleep_until_us(monotonic_us() + 1000);
    }
    if (options.ready_path) {
      JsonObject().add("cpus", static_cast<uint64_t>(records.size())).write_file(*options.ready_path);
    }
    // Wait for a stop signal, the duration, or the parent's death (PDEATHSIG is a SIGTERM).
    pollfd fd{stop.fd(), POLLIN, 0};
    while (!stop.triggered()) {
      int timeout_ms = -1;
      if (until != 0) {
        const uint64_t now = monotonic_us();
        if (now >= until) break;
        timeout_ms = static_cast<int>((until - now) / 1000 + 1);
      }
      ::poll(&fd, 1, timeout_ms);
    }
    probe.stop();
    for (std::thread& t : threads) t.join();
    probe.json(records, start, monotonic_us()).write_file(options.stats_path);
    return 0;
  } catch (const std::exception& e) {
    std::cerr << "netrepro-cpu-probe: " << e.what() << '\n';
    return 1;
  }
}
