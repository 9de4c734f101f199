// sprout-peer: one Sprout (or Sprout-EWMA) endpoint that sends and receives at once, as the
// reference's bidirectional bulk test application: run one listening (--port P) and one
// connecting (--connect H --port P); each saturates its direction, and each one's forecast
// for what it receives rides on its own outgoing datagrams.
#include <exception>
#include <iostream>
#include <limits>
#include <stdexcept>

#include "arg_parser.hh"
#include "peer_app.hh"
#include "signal_fd.hh"

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
               Need::Required)
      .flag("--ewma", "Sprout-EWMA forecasts instead of Sprout's model", &config.ewma)
      .number("--quantile", "Q",
              "the forecast's lower quantile, in (0, 1); default 0.05 (the paper's 95% confidence)",
              &config.quantile, 0.0, 1.0)
      .number("--duration-s", "S", "stop after S seconds (default: until SIGINT/SIGTERM)",
              &config.duration_s, 0.0, std::numeric_limits<double>::max())
      .text("--stats", "FILE", "write stats JSON here at the end", &stats_path);
  try {
    if (!parser.parse(argc, argv)) {
      std::cout << parser.usage();
      return 0;
    }
    if (config.quantile >= 1.0) {
      throw UsageError("--quantile must be below 1");
    }
  } catch (const UsageError& e) {
    std::cerr << "sprout-peer: " << e.what() << "\n" << parser.usage();
    return 2;
  }
  config.port = static_cast<uint16_t>(port);

  try {
    if (!stats_path.empty()) {
      JsonObject::check_writable(stats_path);
    }
    SignalFd signals;  // before the tables are computed, so an early SIGTERM still ends cleanly
    PeerApp app(config);
    app.run(signals);
    const JsonObject stats = app.stats();
    if (!stats_path.empty()) {
      stats.write_file(stats_path);
    }
    std::cerr << "sprout-peer: stopped\n" << stats.str();
    if (app.forecasts_received() == 0) {
      std::cerr << "sprout-peer: no forecast ever arrived from the other end"
                << (app.attached() ? "" : " (it never sent anything)") << "\n";
      return 3;
    }
  } catch (const std::invalid_argument& e) {
    std::cerr << "sprout-peer: " << e.what() << "\n" << parser.usage();
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "sprout-peer: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
