// The command line of netrepro-link.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "arg_parser.hh"
#include "peer_delays.hh"
#include "rate_steps.hh"

namespace netrepro {

struct DirectionOptions {
  std::optional<std::string> trace;      // --X-trace FILE
  std::optional<double> rate_mbps;       // --X-rate-mbps R
  RateSteps rate_steps;                  // --X-rate-steps MS:MBPS,... (with a fixed rate)
  double loss = 0;                       // --X-loss P: random loss after the queue
  bool loss_given = false;               // --X-loss was given (even as 0): stats record it
  uint64_t delay_ms = 0;                 // --X-delay-ms D
  PeerDelays peer_delays;                // --a2b-delay-by-src / --b2a-delay-by-dst IP=MS,...
  std::string order;                     // --X-order; default depends on the direction
  std::string queue = "infinite";        // --X-queue SPEC
  std::string log;                       // --X-log FILE
  std::string lateness;                  // --X-lateness FILE (optional)
  std::string queue_log;                 // --X-queue-log FILE (optional)
};

struct Options {
  std::string iface_a, iface_b;
  DirectionOptions a2b, b2a;
  bool once = false;
  std::optional<uint64_t> span_ms;  // --span-ms N: no service after N ms
  uint64_t loss_seed = 1;           // --loss-seed N: seeds both directions' random loss
  bool realtime = false;            // --realtime: the timing loop runs under SCHED_FIFO
  std::optional<uint64_t> spin_us;  // --spin-us N: spin window before a send (default: auto)
  std::optional<uint64_t> cpu;      // --cpu N: the timing loop's only CPU (default: any)
  std::string data_path = "mmsg";  // --data-path rings|mmsg: how frames are received
  std::string stats;
  std::string ready_file;
  std::string command_line;

  // Throws UsageError naming the offending flag or value; `help` (if given) is set when
  // --help was asked for (the options are then incomplete).
  static Options parse(const std::vector<std::string>& args, bool* help = nullptr);
  static std::string usage(const std::string& program);
};

}  // namespace netrepro
