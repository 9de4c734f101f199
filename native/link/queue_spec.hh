// The queue discipline of one direction: infinite, or droptail by packets and/or bytes.
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
  enum class Kind { Infinite, DropTail };
  Kind kind = Kind::Infinite;
  uint64_t packet_limit = 0;  // 0: no packet limit
  uint64_t byte_limit = 0;    // 0: no byte limit (bytes on the IP length + 4 basis)

  // Parses "infinite", "droptail:packets=N", "droptail:bytes=N", "droptail:packets=N,bytes=M".
  static QueueSpec parse(const std::string& text);
  // Whether a queue holding `packets`/`bytes` may accept one more packet of `size` bytes.
  bool accepts(uint64_t packets, uint64_t bytes, uint64_t size) const;
  // "infinite" or "droptail [packets=N, bytes=M]", for log headers.
  std::string describe() const;
};

}  // namespace netrepro
