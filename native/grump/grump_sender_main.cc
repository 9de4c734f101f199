// grump-sender --host H --port P --controller NAME [--window N] [--param NAME=VALUE]...
//              [--duration-s S]
//              [--stats FILE] [--log FILE] [--debug]
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <limits>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>

#include "clock.hh"
#include "controller_registry.hh"
#include "datagrump_sender.hh"
#include "json_object.hh"
#include "rtt_summary.hh"
#include "signal_fd.hh"

using namespace netrepro;
using namespace netrepro::grump;

namespace {

constexpr int kUsageError = 2;
constexpr int kNoAcks = 3;

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

void usage(std::ostream& out, const ControllerRegistry& registry) {
  out << "usage: grump-sender --host H --port P --controller NAME [--window N]\n"
         "                    [--param NAME=VALUE]... [--duration-s S] [--stats FILE]\n"
         "                    [--log FILE] [--debug]\n"
         "  --param sets a controller parameter (controllers.tsv lists them, with their\n"
         "  ranges); --window N is --param window=N.\n"
         "  Sends contest datagrams to H:P under a congestion controller for S seconds\n"
         "  (or until SIGINT/SIGTERM), then writes stats JSON to FILE (if given).\n"
         "  --log FILE writes one line per ACK: ack_arrival_ms seq rtt_ms window.\n"
         "  controllers: "
      << registry.names_joined()
      << "\n  exit status: 0 ok, 1 runtime error, 2 bad arguments, 3 no ACK arrived.\n";
}

unsigned long parse_unsigned(const std::string& flag, const std::string& text,
                             unsigned long max) {
  size_t used = 0;
  unsigned long value = 0;
  try {
    value = std::stoul(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (text.empty() || text[0] == '-' || used != text.size() || value > max) {
    throw std::invalid_argument(flag + " '" + text + "' is not an integer in 0.." +
                                std::to_string(max));
  }
  return value;
}

double parse_duration(const std::string& text) {
  size_t used = 0;
  double value = 0;
  try {
    value = std::stod(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != text.size() || !std::isfinite(value) || value <= 0) {
    throw std::invalid_argument("--duration-s '" + text + "' is not a positive number of seconds");
  }
  return value;
}

Options parse(int argc, char* argv[], const ControllerRegistry& registry) {
  Options o;
  bool have_port = false;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) {
        throw std::invalid_argument(arg + " needs a value");
      }
      return argv[++i];
    };
    if (arg == "--host") {
      o.host = value();
    } else if (arg == "--port") {
      o.port = static_cast<uint16_t>(parse_unsigned(arg, value(), 65535));
      have_port = o.port != 0;
      if (!have_port) {
        throw std::invalid_argument("--port 0 is not a destination port");
      }
    } else if (arg == "--controller") {
      o.controller = value();
    } else if (arg == "--window") {
      o.controller_options.set("window", static_cast<double>(parse_unsigned(
                                             arg, value(), std::numeric_limits<unsigned int>::max())));
    } else if (arg == "--param") {
      const std::string text = value();
      const size_t eq = text.find('=');
      size_t used = 0;
      double number = 0;
      try {
        number = eq == std::string::npos ? 0 : std::stod(text.substr(eq + 1), &used);
      } catch (const std::exception&) {
        used = 0;
      }
      if (eq == std::string::npos || eq == 0 || used == 0 || eq + 1 + used != text.size()) {
        throw std::invalid_argument("--param '" + text + "' is not NAME=NUMBER");
      }
      o.controller_options.set(text.substr(0, eq), number);
    } else if (arg == "--duration-s") {
      o.duration_s = parse_duration(value());
    } else if (arg == "--stats") {
      o.stats_path = value();
    } else if (arg == "--log") {
      o.log_path = value();
    } else if (arg == "--debug") {
      o.debug = true;
      o.controller_options.debug = true;
    } else if (arg == "-h" || arg == "--help") {
      usage(std::cout, registry);
      std::exit(0);
    } else {
      throw std::invalid_argument("unknown argument '" + arg + "'");
    }
  }
  if (o.host.empty() || !have_port || o.controller.empty()) {
    throw std::invalid_argument("--host, --port and --controller are required");
  }
  return o;
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
  try {
    options = parse(argc, argv, registry);
    peer = Address::from(options.host, options.port);
    controller = registry.create(options.controller, options.controller_options);
  } catch (const std::exception& e) {  // bad arguments, unknown controller, bad --window
    std::cerr << "grump-sender: " << e.what() << '\n';
    usage(std::cerr, registry);
    return kUsageError;
  }
  try {
    if (options.stats_path) {
      JsonObject::check_writable(*options.stats_path);
    }
  } catch (const std::exception& e) {
    std::cerr << "grump-sender: " << e.what() << '\n';
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
    std::cerr << "grump-sender: sending to " << peer.str() << " with " << options.controller
              << std::endl;
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
          .write_file(*options.stats_path);
    }
    std::cerr << "grump-sender: sent " << c.datagrams_sent << ", " << c.acks_received
              << " acks, " << c.timeouts << " timeouts in " << elapsed_s << " s" << std::endl;
    if (c.acks_received == 0) {
      std::cerr << "grump-sender: no ACK arrived from " << peer.str() << " in " << elapsed_s
                << " s; is grump-receiver running there and reachable?" << std::endl;
      return kNoAcks;
    }
    return 0;
  } catch (const std::exception& e) {
    std::cerr << "grump-sender: " << e.what() << '\n';
    return 1;
  }
}
