// CoDel (Controlled Delay, RFC 8289; the queue of the Sprout paper's Cellsim comparison and
// mahimahi's `codel`): drops at dequeue time when packets have waited longer than `target`
// for at least `interval`, then at intervals shrinking as interval/sqrt(count), until the
// waiting time falls below target again. Clock-free: the caller passes the time of the
// delivery opportunity being served, so tests can drive it with a fake clock.
#pragma once

#include <cstdint>
#include <deque>
#include <optional>
#include <vector>

#include "packet.hh"

namespace netrepro {

struct CodelParams {
  uint64_t target_us = 5000;
  uint64_t interval_us = 100000;
};

class Codel {
 public:
  // A queue holding no more than this many bytes is never dropped from (one opportunity's
  // worth on mahimahi's basis: RFC 8289's MAXPACKET).
  static constexpr uint64_t kMaxPacketBytes = 1504;

  explicit Codel(CodelParams params) : params_(params) {}

  // Takes the packet to send next from the front of `queue` (whose bytes `queue_bytes`
  // counts) at time now_us, moving the packets CoDel drops to `dropped` in order. Nothing
  // when the queue is (or becomes) empty.
  std::optional<Packet> dequeue(uint64_t now_us, std::deque<Packet>& queue,
                                uint64_t& queue_bytes, std::vector<Packet>& dropped);

  // The state, for tests and the log header.
  bool dropping() const { return dropping_; }
  uint32_t count() const { return count_; }
  uint64_t drop_next_us() const { return drop_next_us_; }
  const CodelParams& params() const { return params_; }

 private:
  struct Head {
    std::optional<Packet> packet;
    bool ok_to_drop = false;
  };
  Head pop_head(uint64_t now_us, std::deque<Packet>& queue, uint64_t& queue_bytes);
  uint64_t control_law(uint64_t t_us, uint32_t count) const;

  CodelParams params_;
  std::optional<uint64_t> first_above_time_us_;  // when sojourn above target becomes a drop
  uint64_t drop_next_us_ = 0;
  uint32_t count_ = 0;      // drops since entering the dropping state
  uint32_t lastcount_ = 0;  // count_ when the dropping state was last entered
  bool dropping_ = false;
};

}  // namespace netrepro
