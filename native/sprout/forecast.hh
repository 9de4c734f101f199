// What the receiver tells the sender once per tick.
#pragma once

#include <cstdint>

#include "forecaster.hh"

namespace netrepro::sprout {

struct Forecast {
  // Sender sequence space (bytes): everything below this was received or
  // given up as lost, plus the payload bytes received above it.
  uint64_t received_or_lost = 0;
  // The receiver's tick start (its CLOCK_MONOTONIC, ms); identifies the tick.
  uint64_t tick_start_ms = 0;
  // counts[k]: packets delivered in the next k + 1 ticks, cumulative, at the
  // chosen lower quantile.
  Counts counts{};

  bool operator==(const Forecast& o) const {
    return received_or_lost == o.received_or_lost && tick_start_ms == o.tick_start_ms &&
           counts == o.counts;
  }
};

}  // namespace netrepro::sprout
