// Sender -> receiver datagram: data or an empty heartbeat.
//
// Wire format (big-endian, 24-byte header then the payload):
//   offset size field
//        0    1 type = 0x01 (data)
//        1    1 version = 1
//        2    2 time_to_next_ms  0 = more follows now; > 0 = last of a flight,
//                                the sender may be silent that long
//        4    2 throwaway_window bytes of sequence space back to the oldest
//                                packet sent in the last 10 ms
//        6    2 payload_length   bytes after the header (0..1440); must match
//        8    8 seq              byte offset in the sender's stream (each
//                                packet advances it by payload + 50)
//       16    8 send_time_us     sender CLOCK_MONOTONIC (diagnostics; only
//                                comparable when both ends share a kernel)
//       24    n payload
// A full data datagram is 24 + 1440 = 1464 bytes of UDP payload, 1492 bytes
// of IPv4 packet, under a 1500-byte MTU.
#pragma once

#include <cstdint>
#include <string>

namespace netrepro::sprout {

struct DataDatagram {
  static constexpr uint8_t kType = 0x01;
  static constexpr uint8_t kVersion = 1;
  static constexpr size_t kHeaderBytes = 24;

  uint16_t time_to_next_ms = 0;
  uint16_t throwaway_window = 0;
  uint64_t seq = 0;
  uint64_t send_time_us = 0;
  uint16_t payload_length = 0;  // the payload itself is filler

  std::string encode() const;
  // Throws std::invalid_argument naming the problem for anything malformed.
  static DataDatagram decode(const std::string& wire);
};

}  // namespace netrepro::sprout
