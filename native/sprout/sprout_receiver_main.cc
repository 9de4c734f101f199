// sprout-receiver: the Sprout (or Sprout-EWMA) receiving end.
#include <cmath>
#include <exception>
#include <iostream>
#include <stdexcept>

#include "cli_args.hh"
#include "receiver_app.hh"
#include "signal_watch.hh"

using namespace netrepro::sprout;

namespace {
const char* const kUsage =
    "usage: sprout-receiver --port P [--bind ADDR] [--ewma] [--confidence Q] [--stats FILE]\n"
    "  --port P        UDP port to listen on (1..65535)\n"
    "  --bind ADDR     local IPv4 address (default 0.0.0.0)\n"
    "  --ewma          Sprout-EWMA forecasts instead of Sprout's model\n"
    "  --confidence Q  forecast quantile in (0, 1), default 0.05\n"
    "  --stats FILE    write stats JSON here on SIGINT/SIGTERM\n"
    "Waits for a sprout-sender, sends it one forecast per 20 ms tick, runs until\n"
    "SIGINT/SIGTERM.\n";
}

int main(int argc, char** argv) {
  ReceiverConfig config;
  std::string stats_path;
  try {
    CliArgs args(argc, argv);
    bool have_port = false;
    while (!args.done()) {
      const std::string flag = args.next_flag();
      if (flag == "--port") {
        config.port = CliArgs::parse_port(flag, args.value(flag));
        have_port = true;
      } else if (flag == "--bind") {
        config.bind_host = args.value(flag);
      } else if (flag == "--ewma") {
        config.ewma = true;
      } else if (flag == "--confidence") {
        config.confidence = CliArgs::parse_double(flag, args.value(flag), 0.0, 1.0);
      } else if (flag == "--stats") {
        stats_path = args.value(flag);
      } else if (flag == "--help" || flag == "-h") {
        std::cout << kUsage;
        return 0;
      } else {
        throw UsageError("unknown flag '" + flag + "'");
      }
    }
    if (!have_port) {
      throw UsageError("--port is required");
    }
  } catch (const UsageError& e) {
    std::cerr << "sprout-receiver: " << e.what() << "\n" << kUsage;
    return 2;
  }

  try {
    SignalWatch signals;
    ReceiverApp app(config);
    app.run(signals);
    const JsonObject stats = app.stats();
    if (!stats_path.empty()) {
      stats.write(stats_path);
    }
    std::cerr << "sprout-receiver: stopped\n" << stats.str();
  } catch (const std::invalid_argument& e) {
    // e.g. a --bind value that is not an IPv4 address
    std::cerr << "sprout-receiver: " << e.what() << "\n" << kUsage;
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "sprout-receiver: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
