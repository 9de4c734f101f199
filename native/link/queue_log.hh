// The per-packet queue log of one direction: one line per packet when its fate is known, so
// the queue's length is known at every arrival (not polled) and each packet's real send time
// sits beside its schedule. Times are integer microseconds after the base timestamp:
//   - ARRIVAL BACKLOG SIZE ECN_IN ECN_OUT DEPARTURE RELEASE SENT   (a packet sent on)
//   d ARRIVAL BACKLOG SIZE ECN_IN                                   (dropped at enqueue)
//   D ARRIVAL BACKLOG SIZE ECN_IN DROPPED                           (dropped at dequeue: CoDel)
//   l ARRIVAL BACKLOG SIZE ECN_IN ECN_OUT DEPARTURE                 (left the queue, then lost
//                                                                    to random loss)
// ECN fields are the codepoint as a number: 0 Not-ECT, 1 ECT(1), 2 ECT(0), 3 CE.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "buffered_writer.hh"
#include "drop_observer.hh"
#include "packet.hh"
#include "random_loss.hh"

namespace netrepro {

class QueueLog : public DropObserver, public LossObserver {
 public:
  explicit QueueLog(const std::string& path);

  // Writes "# <line>" for each line, then the format lines; times after that are counted from
  // base_us (with `losses`, the random-loss line's format too). Call once, before any event.
  void start(const std::vector<std::string>& header, uint64_t base_us, bool losses = false);
  // The packet left the link: scheduled release (after the delay stage) and the time the frame
  // was handed to the socket.
  void sent(const Packet& packet, uint64_t release_us, uint64_t sent_us);
  void dropped(const Packet& packet, uint64_t time_us, bool at_dequeue) override;
  void lost(const Packet& packet) override;
  void flush() { out_.flush(); }

 private:
  void time(uint64_t us);
  void arrival_fields(const Packet& packet);

  BufferedWriter out_;
  uint64_t base_us_ = 0;
};

}  // namespace netrepro
