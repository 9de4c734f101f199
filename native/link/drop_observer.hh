// Which packet a queue dropped, beyond mahimahi's `d` line: the per-packet queue log's view.
#pragma once

#include <cstdint>

#include "packet.hh"

namespace netrepro {

class DropObserver {
 public:
  virtual ~DropObserver() = default;
  // `packet` carries what the queue saw on its arrival (backlog, ECN field). at_dequeue: taken
  // from the head and dropped by the AQM (CoDel) at time_us, else refused at enqueue.
  virtual void dropped(const Packet& packet, uint64_t time_us, bool at_dequeue) = 0;
};

}  // namespace netrepro
