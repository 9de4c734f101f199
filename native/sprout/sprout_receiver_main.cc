// sprout-receiver: the Sprout (or Sprout-EWMA) receiving end.
#include "arg_parser.hh"
#include "receiver_app.hh"
#include "sprout_program.hh"

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
      .text("--bind", "ADDR", "local IPv4 address (default 0.0.0.0)", &config.bind_host);
  forecast_flags(parser, &config.ewma, &config.quantile)
      .text("--stats", "FILE", "write stats JSON here on SIGINT/SIGTERM", &stats_path);
  if (const auto status = parser.parse_or_exit_status(
          argc, argv, [&] { check_quantile_below_one(config.quantile); })) {
    return *status;
  }
  config.port = static_cast<uint16_t>(port);
  // A --bind value that is not an IPv4 address is a bad usage (status 2).
  return run_sprout_program<ReceiverApp>(parser, config, stats_path);
}
