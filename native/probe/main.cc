// netrepro-cpu-probe: one pinned SCHED_FIFO thread per CPU, recording how late each periodic
// wake-up came, until SIGTERM/SIGINT (or --duration-s); then the stats JSON (README.md).
// Exit status: 0 after a stop, 1 on a runtime error, 2 on a bad command line or stats path.
#include <poll.h>
#include <sys/prctl.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstring>
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
#include "system_error.hh"

using namespace netrepro;

namespace {

constexpr int kUsageError = 2;
// How long the threads may take to pin themselves and set their scheduling.
constexpr uint64_t kStartTimeoutUs = 5'000'000;
// The longest the main thread sleeps without looking whether a CPU's thread failed.
constexpr uint64_t kCheckIntervalUs = 1'000'000;

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
      .integer("--period-us", "N", "wake-up period (default 10000)", &o.probe.period_us, 100,
               1'000'000)
      .integer("--report-us", "N", "list wake-ups later than this (default 2000)",
               &o.probe.report_us, 0, 60'000'000)
      .custom("--priority", "N", "SCHED_FIFO priority, 0 to stay SCHED_OTHER (default 11)",
              Need::Optional,
              [&o](const std::string& v) {
                o.probe.priority = static_cast<int>(ArgParser::to_integer("--priority", v, 0, 99));
              })
      .integer("--max-events", "N", "late wake-ups listed, all CPUs (default 1000)",
               &o.probe.max_events, 0, 1'000'000)
      .flag("--spin", "read the clock without sleeping: gaps over --report-us are the CPU "
            "taken away (under SCHED_FIFO, ordinary tasks get the CPU only from the "
            "kernel's real-time throttle, 50 ms a second, and only while they wait)",
            &o.probe.spin)
      .number("--duration-s", "S", "stop by itself after S seconds (default: at a signal)",
              &o.duration_s, 0, 1e7);
  return parser;
}

// The CPU threads, stopped and joined on every way out of run(), an exception included.
class Workers {
 public:
  explicit Workers(CpuProbe& probe) : probe_(probe) {}
  ~Workers() { join(); }
  Workers(const Workers&) = delete;
  Workers& operator=(const Workers&) = delete;

  std::vector<std::thread> threads;
  void join() {
    probe_.stop();
    for (std::thread& t : threads) {
      if (t.joinable()) t.join();
    }
  }

 private:
  CpuProbe& probe_;
};

int run(const Options& options) {
  // Ends with the thread that started it (the run's), even one killed outright: a forgotten
  // probe would keep a real-time thread on every CPU.
  if (::prctl(PR_SET_PDEATHSIG, SIGTERM) != 0) {
    std::cerr << "netrepro-cpu-probe: warning: PR_SET_PDEATHSIG: " << std::strerror(errno)
              << "; it will not stop with its parent\n";
  }
  SignalFd stop;  // before the threads, so they inherit the blocked signals
  CpuProbe probe(options.probe);
  std::vector<CpuRecord> records;
  for (int cpu : allowed_cpus()) {
    records.emplace_back();
    records.back().cpu = cpu;
  }
  std::vector<std::string> errors(records.size());
  const uint64_t start = monotonic_us();
  const uint64_t until =
      options.duration_s ? start + static_cast<uint64_t>(*options.duration_s * 1e6) : 0;
  std::atomic<int> started{0};
  Workers workers(probe);
  for (size_t i = 0; i < records.size(); ++i) {
    workers.threads.emplace_back([&probe, &records, &errors, &started, until, i] {
      try {
        probe.run_cpu(records[i], started, until);
      } catch (const std::exception& e) {
        errors[i] = e.what();
        probe.stop();
      }
    });
  }

  // Ready once every thread is pinned and scheduled, unless a stop came first.
  while (started.load() < static_cast<int>(records.size()) && !probe.stopping() &&
         !stop.triggered()) {
    if (monotonic_us() - start > kStartTimeoutUs) {
      workers.join();
      std::cerr << "netrepro-cpu-probe: " << started.load() << " of " << records.size()
                << " CPU threads started within " << kStartTimeoutUs / 1'000'000 << " s\n";
      return 1;
    }
    sleep_until_us(monotonic_us() + 1000);
  }
  if (options.ready_path && !probe.stopping() && !stop.triggered()) {
    JsonObject()
        .add("cpus", static_cast<uint64_t>(records.size()))
        .add("start_us", start)
        .write_file(*options.ready_path);
  }

  // A stop signal, the duration, or a CPU's thread failing (PDEATHSIG is a SIGTERM).
  pollfd fd{stop.fd(), POLLIN, 0};
  while (!stop.triggered() && !probe.stopping()) {
    uint64_t wait_us = kCheckIntervalUs;
    if (until != 0) {
      const uint64_t now = monotonic_us();
      if (now >= until) break;
      wait_us = std::min(wait_us, until - now);
    }
    if (::poll(&fd, 1, static_cast<int>((wait_us + 999) / 1000)) < 0 && errno != EINTR) {
      throw SystemError("poll on the signalfd", errno);
    }
  }
  workers.join();
  const uint64_t end = monotonic_us();
  for (size_t i = 0; i < records.size(); ++i) {
    if (!errors[i].empty()) {
      std::cerr << "netrepro-cpu-probe: CPU " << records[i].cpu << ": " << errors[i] << '\n';
      return 1;
    }
  }
  probe.json(records, start, end).write_file(options.stats_path);
  return 0;
}

}  // namespace

int main(int argc, char* argv[]) {
  Options options;
  ArgParser parser = parser_for(options);
  if (const auto status = parser.parse_or_exit_status(argc, argv)) return *status;
  try {
    // A bad path fails now, as a usage error, not after the run.
    JsonObject::check_writable(options.stats_path);
  } catch (const std::exception& e) {
    std::cerr << "netrepro-cpu-probe: " << e.what() << '\n';
    return kUsageError;
  }
  try {
    return run(options);
  } catch (const SystemError& e) {
    std::cerr << "netrepro-cpu-probe: " << e.what() << " (errno " << e.error_number() << ")\n";
    return 1;
  } catch (const std::exception& e) {
    std::cerr << "netrepro-cpu-probe: " << e.what() << '\n';
    return 1;
  }
}
