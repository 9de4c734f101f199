// Receiver -> sender datagram: one forecast, at most one per tick.
//
// Wire format (big-endian, 56 bytes):
//   offset size field
//        0    1 type = 0x02 (feedback)
//        1    1 version = 1
//        2    2 horizons = 8 (number of counts that follow)
//        4    4 reserved, 0
//        8    8 received_or_lost  bytes of the sender's sequence space
//       16    8 tick_start_ms     receiver's tick (its CLOCK_MONOTONIC)
//       24  4*8 counts[0..7]      cumulative packets in the next 1..8 ticks
#pragma once

#include <cstdint>
#include <string>

#include "forecast.hh"

namespace netrepro::sprout {

struct FeedbackDatagram {
  static constexpr uint8_t kType = 0x02;
  static constexpr uint8_t kVersion = 1;
  static constexpr size_t kBytes = 24 + 4 * kHorizons;

  Forecast forecast;

  std::string encode() const;
  // Throws std::invalid_argument naming the problem for anything malformed.
  static FeedbackDatagram decode(const std::string& wire);
};

}  // namespace netrepro::sprout
