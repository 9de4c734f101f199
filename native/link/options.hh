// The command line of netrepro-link.
#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace netrepro {

// A bad command line; main() prints it with the usage text and exits with status 2.
class UsageError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

struct DirectionOptions {
  std::optional<std::string> trace;      // --X-trace FILE
  std::optional<double> rate_mbps;       // --X-rate-mbps R
  uint64_t delay_ms = 0;                 // --X-delay-ms D
  std::string order;                     // --X-order; default depends on the direction
  std::string queue = "infinite";        // --X-queue SPEC
  std::string log;                       // --X-log FILE
  std::string lateness;                  // --X-lateness FILE (optional)
};

struct Options {
  std::string iface_a, iface_b;
  DirectionOptions a2b, b2a;
  bool once = false;
  std::optional<uint64_t> span_ms;  // --span-ms N: no service after N ms
  bool realtime = false;            // --realtime: the timing loop runs under SCHED_FIFO
  std::string stats;
  std::string ready_file;
  std::string command_line;

  // Throws UsageError naming the offending flag or value.
  static Options parse(const std::vector<std::string>& args);
  static std::string usage(const std::string& program);
};

}  // namespace netrepro
