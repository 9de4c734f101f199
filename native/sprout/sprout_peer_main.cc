// sprout-peer: one Sprout (or Sprout-EWMA) endpoint that sends and receives at once, as the
// reference's bidirectional bulk test application: run one listening (--port P) and one
// connecting (--connect H --port P); each saturates its direction, and each one's forecast
// for what it receives rides on its own outgoing datagrams.
#include <iostream>
#include <limits>

#include "arg_parser.hh"
#include "peer_app.hh"
#include "sprout_program.hh"

using namespace netrepro;
using namespace netrepro::sprout;

int main(int argc, char** argv) {
  PeerConfig config;
  std::string stats_path;
  uint64_t port = 0;
  ArgParser parser("sprout-peer", "",
                   "Without --connect it listens on --port for the other end.\n"
                   "Exit status: 0 ok, 1 error, 2 bad usage, 3 no forecast ever arrived.");
  parser.text("--connect", "H", "the listening end's IPv4 address (this end connects)",
              &config.connect_host)
      .integer("--port", "P", "the UDP port to connect to, or to listen on", &port, 1, 65535,
               Need::Required);
  forecast_flags(parser, &config.ewma, &config.quantile)
      .number("--duration-s", "S", "stop after S seconds (default: until SIGINT/SIGTERM)",
              &config.duration_s, 0.0, std::numeric_limits<double>::max())
      .text("--stats", "FILE", "write stats JSON here at the end", &stats_path);
  if (const auto status = parser.parse_or_exit_status(
          argc, argv, [&] { check_quantile_below_one(config.quantile); })) {
    return *status;
  }
  config.port = static_cast<uint16_t>(port);
  return run_sprout_program<PeerApp>(parser, config, stats_path, [](const PeerApp& app) {
    if (app.forecasts_received() > 0) return 0;
    std::cerr << "sprout-peer: no forecast ever arrived from the other end"
              << (app.attached() ? "" : " (it never sent anything)") << "\n";
    return kNoForecast;
  });
}
