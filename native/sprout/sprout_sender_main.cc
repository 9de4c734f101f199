// sprout-sender: a saturating Sprout sender (always has data to send).
#include <iostream>
#include <limits>

#include "arg_parser.hh"
#include "sender_app.hh"
#include "sprout_program.hh"

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
  if (const auto status = parser.parse_or_exit_status(argc, argv)) {
    return *status;
  }
  config.port = static_cast<uint16_t>(port);
  // A host that is not an IPv4 address is a bad usage (status 2).
  return run_sprout_program<SenderApp>(parser, config, stats_path, [&](const SenderApp& app) {
    if (app.forecasts_received() > 0) return 0;
    std::cerr << "sprout-sender: no forecast ever arrived from " << config.host << ":"
              << config.port << "; is sprout-receiver running there and can it reach this host?\n";
    return kNoForecast;
  });
}
