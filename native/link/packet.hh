// A frame moving through one direction of the link, with its size on mahimahi's byte basis.
#pragma once

#include <cstdint>
#include <string>

#include "ecn_field.hh"

namespace netrepro {

struct Packet {
  std::string frame;     // the whole Ethernet frame, forwarded unchanged but for a CE mark
  uint32_t size = 0;     // IP length + 4 (mahimahi counts the TUN packet-info header)
  uint64_t arrival_us = 0;  // when it entered the current stage (scheduled, not measured)
  // What the trace queue saw, for the per-packet queue log (set by TraceQueue).
  uint64_t departure_us = 0;  // scheduled departure from the queue
  uint32_t backlog = 0;       // packets waiting in the queue when it arrived (itself not counted)
  Ecn ecn_in = Ecn::NotEct;   // its ECN field on arrival at the queue
  Ecn ecn_out = Ecn::NotEct;  // and after the queue (CE when the queue marked it)
};

// The size mahimahi would count for a frame: Ethernet frame length - 14 + 4.
inline uint32_t mahimahi_size(uint64_t ethernet_frame_length) {
  return static_cast<uint32_t>(ethernet_frame_length >= 14 ? ethernet_frame_length - 14 + 4 : 4);
}

}  // namespace netrepro
