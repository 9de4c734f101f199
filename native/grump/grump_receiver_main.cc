// grump-receiver --port P [--stats FILE] [--debug]
#include <cstdlib>
#include <iostream>
#include <optional>
#include <stdexcept>
#include <string>

#include "datagrump_receiver.hh"
#include "json_object.hh"
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

void usage(std::ostream& out) {
  out << "usage: grump-receiver --port P [--stats FILE] [--debug]\n"
         "  Binds 0.0.0.0:P and ACKs every contest datagram to its source until SIGINT/SIGTERM,\n"
         "  then writes stats JSON to FILE (if given).\n";
}

uint16_t parse_port(const std::string& text) {
  size_t used = 0;
  unsigned long value = 0;
  try {
    value = std::stoul(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != text.size() || value == 0 || value > 65535) {
    throw std::invalid_argument("--port '" + text + "' is not a port number in 1..65535");
  }
  return static_cast<uint16_t>(value);
}

Options parse(int argc, char* argv[]) {
  Options o;
  bool have_port = false;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) {
        throw std::invalid_argument(arg + " needs a value");
      }
      return argv[++i];
    };
    if (arg == "--port") {
      o.port = parse_port(value());
      have_port = true;
    } else if (arg == "--stats") {
      o.stats_path = value();
    } else if (arg == "--debug") {
      o.debug = true;
    } else if (arg == "-h" || arg == "--help") {
      usage(std::cout);
      std::exit(0);
    } else {
      throw std::invalid_argument("unknown argument '" + arg + "'");
    }
  }
  if (!have_port) {
    throw std::invalid_argument("--port is required");
  }
  return o;
}

}  // namespace

int main(int argc, char* argv[]) {
  Options options;
  try {
    options = parse(argc, argv);
  } catch (const std::invalid_argument& e) {
    std::cerr << "grump-receiver: " << e.what() << '\n';
    usage(std::cerr);
    return kUsageError;
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
      auto optional_ms = [](const std::optional<uint64_t>& v) -> std::optional<double> {
        return v ? std::optional<double>(static_cast<double>(*v)) : std::nullopt;
      };
      JsonObject()
          .add("port", static_cast<uint64_t>(options.port))
          .add("datagrams_received", c.datagrams_received)
          .add("bytes_received", c.bytes_received)
          .add("acks_sent", c.acks_sent)
          .add("malformed_datagrams", c.malformed_datagrams)
          .add("first_receive_ms", optional_ms(c.first_receive_ms))
          .add("last_receive_ms", optional_ms(c.last_receive_ms))
          .add("stop_signal", static_cast<uint64_t>(signal_number))
          .write_file(*options.stats_path);
    }
    return 0;
  } catch (const std::exception& e) {
    std::cerr << "grump-receiver: " << e.what() << '\n';
    return 1;
  }
}
