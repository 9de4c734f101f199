#include "queue_spec.hh"

namespace netrepro {

namespace {

const char* const kForms =
    "use infinite, droptail:packets=N, droptail:bytes=N, droptail:packets=N,bytes=M, codel or "
    "codel:target=MS,interval=MS";

uint64_t positive_integer(const std::string& text, const std::string& key,
                          const std::string& value) {
  if (value.empty() || value.size() > 15 || value.find_first_not_of("0123456789") != std::string::npos) {
    throw QueueSpecError("bad queue '" + text + "': " + key + "='" + value +
                         "' is not a positive integer");
  }
  const uint64_t n = std::stoull(value);
  if (n == 0) {
    throw QueueSpecError("bad queue '" + text + "': " + key + " must be at least 1");
  }
  return n;
}

}  // namespace

QueueSpec QueueSpec::parse(const std::string& text) {
  QueueSpec spec;
  if (text == "infinite") {
    return spec;
  }
  if (text == "codel") {
    spec.kind = Kind::Codel;
    return spec;
  }
  const size_t colon = text.find(':');
  const std::string kind = text.substr(0, colon);
  if (colon == std::string::npos || colon + 1 == text.size() ||
      (kind != "droptail" && kind != "codel")) {
    throw QueueSpecError("bad queue '" + text + "': " + kForms);
  }
  const std::string rest = text.substr(colon + 1);
  if (kind == "codel") {
    spec.kind = Kind::Codel;
    bool seen_target = false, seen_interval = false;
    size_t start = 0;
    while (start <= rest.size()) {
      size_t comma = rest.find(',', start);
      if (comma == std::string::npos) comma = rest.size();
      const std::string part = rest.substr(start, comma - start);
      const size_t eq = part.find('=');
      const std::string key = part.substr(0, eq);
      const std::string value = eq == std::string::npos ? "" : part.substr(eq + 1);
      if (key == "target" && !seen_target) {
        spec.codel_target_ms = positive_integer(text, key, value);
        seen_target = true;
      } else if (key == "interval" && !seen_interval) {
        spec.codel_interval_ms = positive_integer(text, key, value);
        seen_interval = true;
      } else {
        throw QueueSpecError("bad queue '" + text + "': unknown or repeated parameter '" + key +
                             "'; " + kForms);
      }
      start = comma + 1;
    }
    if (spec.codel_target_ms >= spec.codel_interval_ms) {
      throw QueueSpecError("bad queue '" + text + "': CoDel's target (" +
                           std::to_string(spec.codel_target_ms) +
                           " ms) must be below its interval (" +
                           std::to_string(spec.codel_interval_ms) + " ms)");
    }
    return spec;
  }
  spec.kind = Kind::DropTail;
  bool seen_packets = false, seen_bytes = false;
  size_t start = 0;
  while (start <= rest.size()) {
    size_t comma = rest.find(',', start);
    if (comma == std::string::npos) comma = rest.size();
    const std::string part = rest.substr(start, comma - start);
    const size_t eq = part.find('=');
    const std::string key = part.substr(0, eq);
    const std::string value = eq == std::string::npos ? "" : part.substr(eq + 1);
    if (key == "packets" && !seen_packets) {
      spec.packet_limit = positive_integer(text, key, value);
      seen_packets = true;
    } else if (key == "bytes" && !seen_bytes) {
      spec.byte_limit = positive_integer(text, key, value);
      seen_bytes = true;
    } else {
      throw QueueSpecError("bad queue '" + text + "': unknown or repeated limit '" + key + "'; " +
                           kForms);
    }
    start = comma + 1;
  }
  return spec;
}

bool QueueSpec::accepts(uint64_t packets, uint64_t bytes, uint64_t size) const {
  if (kind != Kind::DropTail) return true;
  if (packet_limit != 0 && packets + 1 > packet_limit) return false;
  if (byte_limit != 0 && bytes + size > byte_limit) return false;
  return true;
}

std::string QueueSpec::describe() const {
  if (kind == Kind::Infinite) return "infinite";
  if (kind == Kind::Codel) {
    return "codel [target=" + std::to_string(codel_target_ms) +
           " ms, interval=" + std::to_string(codel_interval_ms) + " ms]";
  }
  std::string out = "droptail [";
  if (packet_limit != 0) out += "packets=" + std::to_string(packet_limit);
  if (packet_limit != 0 && byte_limit != 0) out += ", ";
  if (byte_limit != 0) out += "bytes=" + std::to_string(byte_limit);
  return out + "]";
}

}  // namespace netrepro
