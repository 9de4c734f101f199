// grump-sender --host H --port P --controller NAME [--window N] [--param NAME=VALUE]...
//              [--duration-s S]
//              [--stats FILE] [--log FILE] [--debug]
#include <cmath>
#include <fstream>
#include <iostream>
#include <limits>
#include <memory>
#include <optional>
#include <stdexcept>
#include <sstream>
#include <string>

#include "clock.hh"
#include "controller_registry.hh"
#include "datagrump_sender.hh"
#include "arg_parser.hh"
#include "json_writer.hh"
#include "rtt_summary.hh"
#include "signal_fd.hh"

#include <unistd.h>

using namespace netrepro;
using namespace netrepro::grump;

namespace {

constexpr int kUsageError = 2;  // also for an unknown controller or a refused --window
constexpr int kNoAcks = 3;

// Each line in one write(): a controller's own threads and children share this error output,
// and a line written in pieces (as std::cerr writes each <<) can be split by one of theirs.
void say(const std::string& line)
{
  const std::string text = "grump-sender: " + line + "\n";
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(STDERR_FILENO, text.data() + done, text.size() - done);
    if (n <= 0) {
      return;  // nowhere left to tell
    }
    done += static_cast<size_t>(n);
  }
}

template <typename... Parts>
std::string joined(const Parts&... parts)
{
  std::ostringstream out;
  (out << ... << parts);
  return out.str();
}

struct Options {
  std::string host;
  uint16_t port = 0;
  std::string controller;
  ControllerOptions controller_options;
  std::optional<double> duration_s;  // none: until SIGINT/SIGTERM
  std::optional<std::string> stats_path;
  std::optional<std::string> log_path;
  bool debug = false;
};

// The sender's flags, stored into `o`.
ArgParser parser_for(Options& o, const ControllerRegistry& registry) {
  ArgParser parser("grump-sender", "",
                   "  --param sets a controller parameter (controllers.tsv lists them, with their\n"
                   "  ranges); --window N is --param window=N.\n"
                   "  Sends contest datagrams to H:P under a congestion controller for S seconds\n"
                   "  (or until SIGINT/SIGTERM), then writes stats JSON to FILE (if given).\n"
                   "  --log FILE writes one line per ACK: ack_arrival_ms seq rtt_ms window.\n"
                   "  controllers: " + registry.names_joined() +
                   "\n  exit status: 0 ok, 1 runtime error, 2 bad arguments, 3 no ACK arrived.\n");
  parser.text("--host", "H", "the receiver's IPv4 address", &o.host, Need::Required)
      .custom("--port", "P", "the receiver's port", Need::Required,
              [&o](const std::string& v) {
                o.port = static_cast<uint16_t>(ArgParser::to_integer("--port", v, 1, 65535));
              })
      .text("--controller", "NAME", "the congestion controller", &o.controller, Need::Required)
      .custom("--window", "N", "the window, for controllers that take one", Need::Optional,
              [&o](const std::string& v) {
                o.controller_options.set("window", static_cast<double>(ArgParser::to_integer(
                    "--window", v, 0, std::numeric_limits<unsigned int>::max())));
              })
      .custom("--param", "NAME=VALUE", "a controller parameter (repeatable)", Need::Repeatable,
              [&o](const std::string& v) {
                const size_t eq = v.find('=');
                if (eq == std::string::npos || eq == 0) {
                  throw std::invalid_argument("'" + v + "' is not NAME=NUMBER");
                }
                o.controller_options.set(v.substr(0, eq),
                                         ArgParser::to_number("--param " + v.substr(0, eq),
                                                              v.substr(eq + 1), -1e300, 1e300));
              })
      .number("--duration-s", "S", "seconds to send (default: until a signal)", &o.duration_s,
              0, 1e9)
      .text("--stats", "FILE", "stats JSON written at the end", &o.stats_path)
      .text("--log", "FILE", "one line per ACK", &o.log_path)
      .flag("--debug", "datagrump-style trace lines on stderr", &o.debug);
  return parser;
}

JsonObject to_json(const std::map<std::string, double>& values) {
  JsonObject out;
  for (const auto& [key, value] : values) {
    out.add(key, value);
  }
  return out;
}

}  // namespace

int main(int argc, char* argv[]) {
  const ControllerRegistry registry = ControllerRegistry::with_builtin_controllers();
  Options options;
  std::unique_ptr<Controller> controller;
  Address peer;
  ArgParser parser = parser_for(options, registry);
  const auto status = parser.parse_or_exit_status(argc, argv, [&] {
    try {
      options.controller_options.debug = options.debug;  // --debug reaches the controller too
      peer = Address::from(options.host, options.port);
      controller = registry.create(options.controller, options.controller_options);
    } catch (const UsageError&) {
      throw;
    } catch (const std::exception& e) {  // a bad host, an unknown controller, a bad --window
      throw UsageError(e.what());
    }
  });
  if (status) {
    return *status;
  }
  try {
    if (options.stats_path) {
      JsonObject::check_writable(*options.stats_path);
    }
  } catch (const std::exception& e) {
    say(e.what());
    return kUsageError;
  }

  try {
    SignalFd stop;
    std::ofstream log;
    if (options.log_path) {
      log.open(*options.log_path, std::ios::trunc);
      if (!log) {
        throw std::runtime_error("cannot open --log file '" + *options.log_path + "'");
      }
    }
    DatagrumpSender sender(peer, *controller, options.log_path ? &log : nullptr,
                           options.debug ? &std::cerr : nullptr);
    say(joined("sending to ", peer.str(), " with ", options.controller));
    const uint64_t duration_ms =
        options.duration_s ? static_cast<uint64_t>(std::llround(*options.duration_s * 1000))
                           : std::numeric_limits<uint64_t>::max() / 2;
    const uint64_t start = monotonic_ms();
    sender.run(duration_ms, stop);
    const double elapsed_s = static_cast<double>(monotonic_ms() - start) / 1000.0;
    log.close();
    if (options.log_path && !log) {
      throw std::runtime_error("could not finish writing --log file '" + *options.log_path + "'");
    }

    const SenderCounters& c = sender.counters();
    const RttSummary rtt = RttSummary::of(c.rtts_ms);
    if (options.stats_path) {
      JsonObject()
          .add("controller", options.controller)
          .add("parameters", to_json(controller->parameters()))
          .add("host", options.host)
          .add("port", static_cast<uint64_t>(options.port))
          .add("duration_s", options.duration_s)
          .add("elapsed_s", elapsed_s)
          .add("stopped_by_signal", c.stopped_by_signal)
          .add("datagrams_sent", c.datagrams_sent)
          .add("acks_received", c.acks_received)
          .add("timeouts", c.timeouts)
          .add("malformed_datagrams", c.malformed_datagrams)
          .add("icmp_errors", c.icmp_errors)
          .add("final_window", static_cast<uint64_t>(controller->window_size()))
          .add("rtt_ms", JsonObject()
                             .add("min", rtt.min_ms)
                             .add("median", rtt.median_ms)
                             .add("p95", rtt.p95_ms))
          .add("host_timing", sender.timing().json())
          .write_file(*options.stats_path);
    }
    say(joined("sent ", c.datagrams_sent, ", ", c.acks_received, " acks, ", c.timeouts,
               " timeouts in ", elapsed_s, " s"));
    if (c.acks_received == 0) {
      say(joined("no ACK arrived from ", peer.str(), " in ", elapsed_s,
                 " s; is grump-receiver running there and reachable?"));
      return kNoAcks;
    }
    return 0;
  } catch (const std::exception& e) {
    say(e.what());
    return 1;
  }
}
