// grump-receiver --port P [--stats FILE] [--debug]
#include <iostream>
#include <optional>
#include <stdexcept>
#include <string>

#include "arg_parser.hh"
#include "datagrump_receiver.hh"
#include "json_writer.hh"
#include "signal_fd.hh"

using namespace netrepro;
using namespace netrepro::grump;

namespace {

constexpr int kUsageError = 2;

struct Options {
  uint16_t port = 0;
  std::optional<std::string> stats_path;
  bool debug = false;
};

ArgParser parser_for(Options& o) {
  ArgParser parser("grump-receiver", "",
                   "  Binds 0.0.0.0:P and ACKs every contest datagram to its source until "
                   "SIGINT/SIGTERM,\n  then writes stats JSON to FILE (if given).\n");
  parser
      .custom("--port", "P", "the port to listen on", Need::Required,
              [&o](const std::string& v) {
                o.port = static_cast<uint16_t>(ArgParser::to_integer("--port", v, 1, 65535));
              })
      .text("--stats", "FILE", "stats JSON written at the end", &o.stats_path)
      .flag("--debug", "one line per malformed datagram on stderr", &o.debug);
  return parser;
}

}  // namespace

int main(int argc, char* argv[]) {
  Options options;
  ArgParser parser = parser_for(options);
  if (const auto status = parser.parse_or_exit_status(argc, argv)) {
    return *status;
  }
  try {
    if (options.stats_path) {
      JsonObject::check_writable(*options.stats_path);
    }
  } catch (const std::exception& e) {
    std::cerr << "grump-receiver: " << e.what() << '\n';
    return kUsageError;
  }
  try {
    SignalFd stop;  // before anything else, so an early SIGTERM still writes stats
    DatagrumpReceiver receiver(Address::from("0.0.0.0", options.port),
                               options.debug ? &std::cerr : nullptr);
    std::cerr << "grump-receiver: listening on " << receiver.local_address().str() << std::endl;
    const int signal_number = receiver.run(stop);
    const ReceiverCounters& c = receiver.counters();
    std::cerr << "grump-receiver: stopped by signal " << signal_number << " after "
              << c.datagrams_received << " datagrams" << std::endl;
    if (options.stats_path) {
      JsonObject()
          .add("port", static_cast<uint64_t>(options.port))
          .add("datagrams_received", c.datagrams_received)
          .add("bytes_received", c.bytes_received)
          .add("acks_sent", c.acks_sent)
          .add("malformed_datagrams", c.malformed_datagrams)
          .add("first_receive_ms", c.first_receive_ms)
          .add("last_receive_ms", c.last_receive_ms)
          .add("stop_signal", static_cast<uint64_t>(signal_number))
          .add("host_timing", receiver.timing().json())
          .write_file(*options.stats_path);
    }
    return 0;
  } catch (const std::exception& e) {
    std::cerr << "grump-receiver: " << e.what() << '\n';
    return 1;
  }
}
