// A fixed delay per far host: IPv4 address -> delay in ms, read from `IP=MS[,IP=MS...]`
// (--a2b-delay-by-src, --b2a-delay-by-dst). Senders with different round-trip times can then
// share one bottleneck in one emulator, the kernel here having no netem.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace netrepro {

// Which address of the frame picks the delay.
enum class PeerKey { Source, Destination };

// A malformed list; the message names the entry at fault (the command line adds the flag).
class PeerDelaysError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

class PeerDelays {
 public:
  // Enough for every host of a Mininet experiment; a longer list is more likely a mistake.
  static constexpr size_t kMaxEntries = 256;
  // As --X-delay-ms.
  static constexpr uint64_t kMaxDelayMs = 999999999;

  struct Entry {
    uint32_t address = 0;  // host byte order
    uint64_t delay_ms = 0;
  };

  PeerDelays() = default;
  // Parses `IP=MS[,IP=MS...]`: dotted-quad IPv4 addresses, whole milliseconds, each address
  // once, at most kMaxEntries. Throws PeerDelaysError.
  static PeerDelays parse(const std::string& text, PeerKey key);

  bool empty() const { return entries_.empty(); }
  PeerKey key() const { return key_; }
  const std::vector<Entry>& entries() const { return entries_; }
  // The list as given, normalised: "10.0.0.2=40,10.0.0.3=53".
  std::string describe() const;
  // "delay_by_src_ms" or "delay_by_dst_ms": the stats key of the map.
  std::string stats_key() const;

  static std::string format_address(uint32_t address);

 private:
  PeerKey key_ = PeerKey::Source;
  std::vector<Entry> entries_;  // in the order given
};

}  // namespace netrepro
