// sprout-sender: a saturating Sprout sender (always has data to send).
#include <exception>
#include <iostream>
#include <limits>
#include <stdexcept>

#include "arg_parser.hh"
#include "sender_app.hh"
#include "signal_fd.hh"

using namespace netrepro;
using namespace netrepro::sprout;

int main(int argc, char** argv) {
  SenderConfig config;
  std::string stats_path;
  uint64_t port = 0;
  ArgParser parser("sprout-sender", "",
                   "Sends what the Sprout window allows to a sprout-receiver.\n"
                   "Exit status: 0 ok, 1 error, 2 bad usage, 3 no forecast ever arrived.");
  parser.text("--host", "H", "receiver's IPv4 address", &config.host, Need::Required)
      .integer("--port", "P", "receiver's UDP port", &port, 1, 65535, Need::Required)
      .number("--duration-s", "S", "stop after S seconds (default: until SIGINT/SIGTERM)",
              &config.duration_s, 0.0, std::numeric_limits<double>::max())
      .text("--stats", "FILE", "write stats JSON here at the end", &stats_path)
      .text("--log", "FILE", "one line per forecast: time, queue estimate, window, counts",
            &config.log_path);
  try {
    if (!parser.parse(argc, argv)) {
      std::cout << parser.usage();
      return 0;
    }
  } catch (const UsageError& e) {
    std::cerr << "sprout-sender: " << e.what() << "\n" << parser.usage();
    return 2;
  }
  config.port = static_cast<uint16_t>(port);

  try {
    if (!stats_path.empty()) {
      JsonObject::check_writable(stats_path);
    }
    SignalFd signals;
    SenderApp app(config);
    app.run(signals);
    const JsonObject stats = app.stats();
    if (!stats_path.empty()) {
      stats.write_file(stats_path);
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
    std::cerr << "sprout-sender: " << e.what() << "\n" << parser.usage();
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "sprout-sender: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
