#include "queue_spec.hh"

#include <map>

namespace netrepro {

namespace {

const char* const kForms =
    "use infinite, droptail:packets=N, droptail:bytes=N, droptail:packets=N,bytes=M, codel, "
    "codel:target=MS,interval=MS, ecn:k=K,packets=N or untrusted:bytes=N";

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

// "k=N,k2=M" after the kind's colon: each key one of `keys`, at most once, N a positive
// integer.
std::map<std::string, uint64_t> keyed_integers(const std::string& text, const std::string& rest,
                                               std::initializer_list<const char*> keys) {
  std::map<std::string, uint64_t> values;
  size_t start = 0;
  while (start <= rest.size()) {
    size_t comma = rest.find(',', start);
    if (comma == std::string::npos) comma = rest.size();
    const std::string part = rest.substr(start, comma - start);
    const size_t eq = part.find('=');
    const std::string key = part.substr(0, eq);
    const std::string value = eq == std::string::npos ? "" : part.substr(eq + 1);
    bool known = false;
    for (const char* k : keys) known = known || key == k;
    if (!known || values.count(key) != 0) {
      throw QueueSpecError("bad queue '" + text + "': unknown or repeated parameter '" + key +
                           "'; " + kForms);
    }
    values[key] = positive_integer(text, key, value);
    start = comma + 1;
  }
  return values;
}

uint64_t value_or(const std::map<std::string, uint64_t>& values, const std::string& key,
                  uint64_t fallback) {
  const auto it = values.find(key);
  return it == values.end() ? fallback : it->second;
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
      (kind != "droptail" && kind != "codel" && kind != "ecn" && kind != "untrusted")) {
    throw QueueSpecError("bad queue '" + text + "': " + kForms);
  }
  const std::string rest = text.substr(colon + 1);
  if (kind == "droptail") {
    const auto limits = keyed_integers(text, rest, {"packets", "bytes"});
    spec.kind = Kind::DropTail;
    spec.packet_limit = value_or(limits, "packets", 0);
    spec.byte_limit = value_or(limits, "bytes", 0);
    return spec;
  }
  if (kind == "untrusted") {
    const auto values = keyed_integers(text, rest, {"bytes"});
    spec.kind = Kind::Untrusted;
    spec.byte_limit = values.at("bytes");
    return spec;
  }
  if (kind == "ecn") {
    const auto values = keyed_integers(text, rest, {"k", "packets"});
    if (values.count("k") == 0 || values.count("packets") == 0) {
      throw QueueSpecError("bad queue '" + text + "': ECN marking needs both k=K (the marking "
                           "threshold) and packets=N (the buffer), as in ecn:k=20,packets=425");
    }
    spec.kind = Kind::Ecn;
    spec.ecn_threshold = values.at("k");
    spec.packet_limit = values.at("packets");
    // A backlog above K must still fit below N, or nothing could ever be marked.
    if (spec.ecn_threshold + 2 > spec.packet_limit) {
      throw QueueSpecError("bad queue '" + text + "': the marking threshold k=" +
                           std::to_string(spec.ecn_threshold) + " must be at most packets - 2 (" +
                           std::to_string(spec.packet_limit) +
                           " - 2), or every packet above k would be dropped, never marked");
    }
    return spec;
  }
  const auto values = keyed_integers(text, rest, {"target", "interval"});
  spec.kind = Kind::Codel;
  spec.codel_target_ms = value_or(values, "target", spec.codel_target_ms);
  spec.codel_interval_ms = value_or(values, "interval", spec.codel_interval_ms);
  if (spec.codel_target_ms >= spec.codel_interval_ms) {
    throw QueueSpecError("bad queue '" + text + "': CoDel's target (" +
                         std::to_string(spec.codel_target_ms) + " ms) must be below its interval (" +
                         std::to_string(spec.codel_interval_ms) + " ms)");
  }
  return spec;
}

bool QueueSpec::accepts(uint64_t packets, uint64_t bytes, uint64_t size) const {
  if (kind != Kind::DropTail && kind != Kind::Ecn && kind != Kind::Untrusted) return true;
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
  if (kind == Kind::Untrusted) {
    return "untrusted [bytes=" + std::to_string(byte_limit) + ", its sender unread while full]";
  }
  if (kind == Kind::Ecn) {
    return "ecn [k=" + std::to_string(ecn_threshold) + ", packets=" + std::to_string(packet_limit) +
           "]";
  }
  std::string out = "droptail [";
  if (packet_limit != 0) out += "packets=" + std::to_string(packet_limit);
  if (packet_limit != 0 && byte_limit != 0) out += ", ";
  if (byte_limit != 0) out += "bytes=" + std::to_string(byte_limit);
  return out + "]";
}

}  // namespace netrepro
