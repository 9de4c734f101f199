// The queue discipline of one direction: infinite, droptail by packets and/or bytes, or CoDel.
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
  enum class Kind { Infinite, DropTail, Codel };
  Kind kind = Kind::Infinite;
  uint64_t packet_limit = 0;  // 0: no packet limit
  uint64_t byte_limit = 0;    // 0: no byte limit (bytes on the IP length + 4 basis)
  uint64_t codel_target_ms = 5;      // CoDel's defaults, as the Sprout paper's Cellsim used
  uint64_t codel_interval_ms = 100;

  // Parses "infinite", "droptail:packets=N", "droptail:bytes=N", "droptail:packets=N,bytes=M",
  // "codel", "codel:target=MS", "codel:interval=MS", "codel:target=MS,interval=MS".
  static QueueSpec parse(const std::string& text);
  // Whether a queue holding `packets`/`bytes` may accept one more packet of `size` bytes.
  bool accepts(uint64_t packets, uint64_t bytes, uint64_t size) const;
  // Whether packets are dropped at enqueue (droptail) or dequeue (CoDel) is the kind's; CoDel
  // queues themselves are unlimited. "infinite", "droptail [packets=N, bytes=M]" or
  // "codel [target=5 ms, interval=100 ms]", for log headers.
  std::string describe() const;
};

}  // namespace netrepro
