// sprout-receiver: the Sprout (or Sprout-EWMA) receiving end.
#include <exception>
#include <iostream>
#include <stdexcept>

#include "arg_parser.hh"
#include "receiver_app.hh"
#include "signal_fd.hh"

using namespace netrepro;
using namespace netrepro::sprout;

int main(int argc, char** argv) {
  ReceiverConfig config;
  std::string stats_path;
  uint64_t port = 0;
  ArgParser parser("sprout-receiver", "",
                   "Waits for a sprout-sender, sends it one forecast per 20 ms tick, runs "
                   "until SIGINT/SIGTERM.");
  parser.integer("--port", "P", "UDP port to listen on", &port, 1, 65535, Need::Required)
      .text("--bind", "ADDR", "local IPv4 address (default 0.0.0.0)", &config.bind_host)
      .flag("--ewma", "Sprout-EWMA forecasts instead of Sprout's model", &config.ewma)
      .number("--quantile", "Q",
              "the forecast's lower quantile, in (0, 1); default 0.05 (the paper's 95% confidence)",
              &config.quantile, 0.0, 1.0)
      .text("--stats", "FILE", "write stats JSON here on SIGINT/SIGTERM", &stats_path);
  try {
    if (!parser.parse(argc, argv)) {
      std::cout << parser.usage();
      return 0;
    }
    if (config.quantile >= 1.0) {
      throw UsageError("--quantile must be below 1");
    }
  } catch (const UsageError& e) {
    std::cerr << "sprout-receiver: " << e.what() << "\n" << parser.usage();
    return 2;
  }
  config.port = static_cast<uint16_t>(port);

  try {
    if (!stats_path.empty()) {
      JsonObject::check_writable(stats_path);
    }
    SignalFd signals;
    ReceiverApp app(config);
    app.run(signals);
    const JsonObject stats = app.stats();
    if (!stats_path.empty()) {
      stats.write_file(stats_path);
    }
    std::cerr << "sprout-receiver: stopped\n" << stats.str();
  } catch (const std::invalid_argument& e) {
    // e.g. a --bind value that is not an IPv4 address
    std::cerr << "sprout-receiver: " << e.what() << "\n" << parser.usage();
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "sprout-receiver: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
