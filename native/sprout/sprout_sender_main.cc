// sprout-sender: a saturating Sprout sender (always has data to send).
#include <cmath>
#include <exception>
#include <iostream>
#include <limits>
#include <stdexcept>

#include "cli_args.hh"
#include "sender_app.hh"
#include "signal_watch.hh"

using namespace netrepro::sprout;

namespace {
const char* const kUsage =
    "usage: sprout-sender --host H --port P [--duration-s S] [--stats FILE] [--log FILE]\n"
    "  --host H        receiver's IPv4 address\n"
    "  --port P        receiver's UDP port (1..65535)\n"
    "  --duration-s S  stop after S seconds (default: run until SIGINT/SIGTERM)\n"
    "  --stats FILE    write stats JSON here at the end\n"
    "  --log FILE      one line per forecast: time, queue estimate, window, counts\n"
    "Exit status: 0 ok, 1 error, 2 bad usage, 3 no forecast ever arrived.\n";
}

int main(int argc, char** argv) {
  SenderConfig config;
  std::string stats_path;
  try {
    CliArgs args(argc, argv);
    bool have_host = false;
    bool have_port = false;
    while (!args.done()) {
      const std::string flag = args.next_flag();
      if (flag == "--host") {
        config.host = args.value(flag);
        have_host = true;
      } else if (flag == "--port") {
        config.port = CliArgs::parse_port(flag, args.value(flag));
        have_port = true;
      } else if (flag == "--duration-s") {
        config.duration_s = CliArgs::parse_double(flag, args.value(flag), 0.0,
                                                  std::numeric_limits<double>::infinity());
      } else if (flag == "--stats") {
        stats_path = args.value(flag);
      } else if (flag == "--log") {
        config.log_path = args.value(flag);
      } else if (flag == "--help" || flag == "-h") {
        std::cout << kUsage;
        return 0;
      } else {
        throw UsageError("unknown flag '" + flag + "'");
      }
    }
    if (!have_host || !have_port) {
      throw UsageError("--host and --port are required");
    }
  } catch (const UsageError& e) {
    std::cerr << "sprout-sender: " << e.what() << "\n" << kUsage;
    return 2;
  }

  try {
    SignalWatch signals;
    SenderApp app(config);
    app.run(signals);
    const JsonObject stats = app.stats();
    if (!stats_path.empty()) {
      stats.write(stats_path);
    }
    std::cerr << "sprout-sender: stopped\n" << stats.str();
    if (app.forecasts_received() == 0) {
      std::cerr << "sprout-sender: no forecast ever arrived from " << config.host << ":"
                << config.port
                << "; is sprout-receiver running there and can it reach this host?\n";
      return 3;
    }
  } catch (const std::invalid_argument& e) {
    // e.g. a host that is not an IPv4 address
    std::cerr << "sprout-sender: " << e.what() << "\n" << kUsage;
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "sprout-sender: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
