// The queue discipline of one direction: infinite, droptail by packets and/or bytes, CoDel, ECN
// threshold marking (DCTCP's switch: CE above K packets, drop-tail at N), or the queue for an
// untrusted sender (infinite up to N bytes; while it holds N, its sender is not read).
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

namespace netrepro {

class QueueSpecError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

struct QueueSpec {
  enum class Kind { Infinite, DropTail, Codel, Ecn, Untrusted };
  Kind kind = Kind::Infinite;
  uint64_t packet_limit = 0;  // 0: no packet limit
  uint64_t byte_limit = 0;    // 0: no byte limit (bytes on the IP length + 4 basis)
  uint64_t codel_target_ms = 5;      // CoDel's defaults, as the Sprout paper's Cellsim used
  uint64_t codel_interval_ms = 100;
  uint64_t ecn_threshold = 0;  // ECN: mark ECT packets arriving to a backlog above this

  // Parses "infinite", "droptail:packets=N", "droptail:bytes=N", "droptail:packets=N,bytes=M",
  // "codel", "codel:target=MS", "codel:interval=MS", "codel:target=MS,interval=MS",
  // "ecn:k=K,packets=N" (both keys required, 1 <= K <= N - 2), "untrusted:bytes=N".
  static QueueSpec parse(const std::string& text);
  // Whether a queue holding `packets`/`bytes` may accept one more packet of `size` bytes.
  bool accepts(uint64_t packets, uint64_t bytes, uint64_t size) const;
  // Whether an ECN-capable packet arriving to `backlog` waiting packets is marked CE.
  bool marks(uint64_t backlog) const { return kind == Kind::Ecn && backlog > ecn_threshold; }
  // An untrusted sender's queue: the emulator stops reading the sender while the queue has
  // no room for one more frame (LinkEmulator), so a flood costs it the link's rate of work.
  bool unread_when_full() const { return kind == Kind::Untrusted; }
  // Whether packets are dropped at enqueue (droptail) or dequeue (CoDel) is the kind's; CoDel
  // queues themselves are unlimited. "infinite", "droptail [packets=N, bytes=M]" or
  // "codel [target=5 ms, interval=100 ms]" or "ecn [k=20, packets=425]", for log headers.
  std::string describe() const;
};

}  // namespace netrepro
