// Receiver-side loss bookkeeping (reference receiver.cc RecvQueue): from the
// sequence numbers (byte offsets in the sender's space) and throwaway windows
// of arriving packets, how many bytes of the sender's stream have been
// received or can be given up as lost.
#pragma once

#include <cstdint>
#include <queue>
#include <utility>
#include <vector>

namespace netrepro::sprout {

class LossTracker {
 public:
  // A packet at `seq` carrying `payload_bytes`, whose sender says everything
  // more than `throwaway_window` bytes before it is old enough to be lost
  // if it has not arrived yet.
  void record(uint64_t seq, uint16_t throwaway_window, uint64_t payload_bytes);

  // throwaway point + payload bytes received at or above it. Like the
  // reference, received packets count their payload only, while sequence
  // numbers also advance by 50 per packet, so the sender's estimate of bytes
  // in flight keeps ~50 bytes per packet received within the last 10 ms.
  uint64_t received_or_lost();

 private:
  using Entry = std::pair<uint64_t, uint64_t>;  // seq, payload bytes
  std::priority_queue<Entry, std::vector<Entry>, std::greater<Entry>> above_;
  uint64_t above_bytes_ = 0;
  uint64_t throwaway_before_ = 0;
};

}  // namespace netrepro::sprout
