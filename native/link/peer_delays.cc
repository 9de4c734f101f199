#include "peer_delays.hh"

#include <arpa/inet.h>

#include <cerrno>
#include <cstdlib>
#include <set>

namespace netrepro {

namespace {

const char* const kForm = " (write IP=MS[,IP=MS...], e.g. 10.0.0.2=40,10.0.0.3=53)";

uint32_t parse_address(const std::string& text, const std::string& entry) {
  in_addr a{};
  // inet_pton takes dotted quads only (no "10.1", no hex, no leading zeros), as ip(8) prints.
  if (::inet_pton(AF_INET, text.c_str(), &a) != 1) {
    throw PeerDelaysError("'" + text + "' in '" + entry + "' is not an IPv4 address" + kForm);
  }
  return ntohl(a.s_addr);
}

uint64_t parse_delay_ms(const std::string& text, const std::string& entry) {
  const bool digits = !text.empty() && text.size() <= 10 &&
                      text.find_first_not_of("0123456789") == std::string::npos;
  const unsigned long long ms = digits ? std::strtoull(text.c_str(), nullptr, 10) : 0;
  if (!digits || ms > PeerDelays::kMaxDelayMs) {
    throw PeerDelaysError("delay '" + text + "' in '" + entry +
                          "' is not a whole number of ms in 0.." +
                          std::to_string(PeerDelays::kMaxDelayMs));
  }
  return ms;
}

}  // namespace

PeerDelays PeerDelays::parse(const std::string& text, PeerKey key) {
  PeerDelays out;
  out.key_ = key;
  std::set<uint32_t> seen;
  size_t start = 0;
  while (true) {
    const size_t comma = text.find(',', start);
    const std::string entry =
        text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    if (entry.empty()) {
      throw PeerDelaysError("an empty entry in '" + text + "'" + kForm);
    }
    const size_t eq = entry.find('=');
    if (eq == std::string::npos) {
      throw PeerDelaysError("'" + entry + "' is not IP=MS" + kForm);
    }
    Entry e;
    e.address = parse_address(entry.substr(0, eq), entry);
    e.delay_ms = parse_delay_ms(entry.substr(eq + 1), entry);
    if (!seen.insert(e.address).second) {
      throw PeerDelaysError(format_address(e.address) + " is listed twice");
    }
    out.entries_.push_back(e);
    if (out.entries_.size() > kMaxEntries) {
      throw PeerDelaysError("more than " + std::to_string(kMaxEntries) + " addresses");
    }
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

std::string PeerDelays::describe() const {
  std::string out;
  for (const Entry& e : entries_) {
    if (!out.empty()) out += ",";
    out += format_address(e.address) + "=" + std::to_string(e.delay_ms);
  }
  return out;
}

std::string PeerDelays::stats_key() const {
  return key_ == PeerKey::Source ? "delay_by_src_ms" : "delay_by_dst_ms";
}

std::string PeerDelays::format_address(uint32_t address) {
  return std::to_string(address >> 24) + "." + std::to_string((address >> 16) & 0xff) + "." +
         std::to_string((address >> 8) & 0xff) + "." + std::to_string(address & 0xff);
}

}  // namespace netrepro
