// The delay stage of one direction: the direction's fixed delay for every packet, or, for an
// IPv4 frame whose source (or destination) address is listed, a delay of its own. One FIFO
// DelayLine per distinct delay; the stage releases the earliest head, so each packet leaves at
// its entry time + its own delay and a shorter path may overtake a longer one, as real paths
// of different lengths do. Without a list it is exactly the single DelayLine it wraps.
// Clock-free like DelayLine: the caller passes times in microseconds.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "delay_line.hh"
#include "packet.hh"
#include "peer_delays.hh"

namespace netrepro {

class DelayStage {
 public:
  // Every packet gets the default line's delay.
  explicit DelayStage(DelayLine default_line);
  // Listed addresses get their own delay, the rest `default_delay_us`.
  DelayStage(uint64_t default_delay_us, const PeerDelays& peers);

  // Holds the packet until entry_us + its delay; entry times must never decrease.
  void push(Packet packet, uint64_t entry_us);
  // Release time of the packet due first, or DelayLine::kNever when empty.
  uint64_t next_release_us() const { return lines_[earliest_].next_release_us(); }
  // Removes and returns the packet due first (of two due at once, the one that entered
  // first); only call when not empty.
  Release pop();
  bool empty() const { return size_ == 0; }
  uint64_t size() const { return size_; }
  // The delay a frame gets here: its listed address's, else the default.
  uint64_t delay_us_for(const std::string& frame) const {
    return lines_[line_for(frame)].delay_us();
  }
  const PeerDelays& peers() const { return peers_; }
  // The shortest delay any packet gets here.
  uint64_t shortest_delay_us() const {
    uint64_t shortest = lines_[0].delay_us();
    for (const DelayLine& l : lines_) shortest = l.delay_us() < shortest ? l.delay_us() : shortest;
    return shortest;
  }

 private:
  size_t line_for(const std::string& frame) const;
  // Whether line a's head is due before line b's (a tie: the longer delay entered first).
  bool due_before(size_t a, size_t b) const;

  std::vector<DelayLine> lines_;  // [0]: the default delay; then one per other listed value
  std::unordered_map<uint32_t, size_t> line_of_address_;  // only listed addresses
  PeerDelays peers_;
  size_t earliest_ = 0;  // the line whose head is due first
  uint64_t size_ = 0;
};

}  // namespace netrepro
