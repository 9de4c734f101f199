// What the three Sprout programs' main() share once their command line is read (with
// ArgParser::parse_or_exit_status): the stats file checked writable before anything starts,
// the stop signals' descriptor made before the app (so an early SIGTERM still ends cleanly),
// the app's run, its stats JSON (to --stats when given, and always to stderr after
// "PROGRAM: stopped"), and the exit status: 0, or what `verdict` says of the finished app
// (3: no forecast ever arrived); 2 with the usage for an std::invalid_argument (e.g. an
// address that is not IPv4); 1 for any other error.
#pragma once

#include <exception>
#include <functional>
#include <iostream>
#include <stdexcept>
#include <string>

#include "arg_parser.hh"
#include "json_writer.hh"
#include "signal_fd.hh"

namespace netrepro::sprout {

// Exit status when no forecast ever arrived (the sender and the peer).
constexpr int kNoForecast = 3;

// The receiving side's forecast flags (sprout-receiver, sprout-peer): --ewma, --quantile.
inline ArgParser& forecast_flags(ArgParser& parser, bool* ewma, double* quantile) {
  return parser.flag("--ewma", "Sprout-EWMA forecasts instead of Sprout's model", ewma)
      .number("--quantile", "Q",
              "the forecast's lower quantile, in (0, 1); default 0.05 (the paper's 95% confidence)",
              quantile, 0.0, 1.0);
}

// The forecast's lower quantile is in (0, 1): the parser's range is closed above.
inline void check_quantile_below_one(double quantile) {
  if (quantile >= 1.0) {
    throw UsageError("--quantile must be below 1");
  }
}

// App: constructed from Config; run(SignalFd&) until stopped; stats() -> JsonObject.
template <typename App, typename Config>
int run_sprout_program(const ArgParser& parser, const Config& config,
                       const std::string& stats_path,
                       const std::function<int(const App&)>& verdict = nullptr) {
  const std::string& program = parser.program();
  try {
    if (!stats_path.empty()) {
      JsonObject::check_writable(stats_path);
    }
    SignalFd signals;
    App app(config);
    app.run(signals);
    const JsonObject stats = app.stats();
    if (!stats_path.empty()) {
      stats.write_file(stats_path);
    }
    std::cerr << program << ": stopped\n" << stats.str();
    return verdict ? verdict(app) : 0;
  } catch (const std::invalid_argument& e) {
    std::cerr << program << ": " << e.what() << "\n" << parser.usage();
    return 2;
  } catch (const std::exception& e) {
    std::cerr << program << ": " << e.what() << "\n";
    return 1;
  }
}

}  // namespace netrepro::sprout
