// The datagram of the bidirectional endpoint (sprout-peer): data (or an empty heartbeat) in
// one direction, with the endpoint's own forecast for the other direction riding on it, as the
// reference's bulk test application carries its forecasts on its outgoing data.
//
// Wire format (big-endian, 25-byte header, then the forecast if flagged, then the payload):
//   offset size field
//        0    1 type = 0x03 (peer)
//        1    1 version = 1
//        2    2 time_to_next_ms   as in a data datagram (data_datagram.hh)
//        4    2 throwaway_window  as in a data datagram
//        6    2 payload_length    bytes of filler at the end; must match
//        8    8 seq               byte offset in this endpoint's stream (+payload +50 a packet)
//       16    8 send_time_us      sender CLOCK_MONOTONIC (diagnostics)
//       24    1 flags             bit 0: a forecast follows
//       25   48 forecast          (if flagged) received_or_lost u64, tick_start_ms u64,
//                                 counts[0..7] u32: the forecast of the datagrams this
//                                 endpoint receives, for the other endpoint's sender
//      25/73  n payload
// What a datagram carries (its forecast and filler) counts as its payload for the sequence
// space, the window and the receiver's packet count, as the reference counts its forecast as
// part of the packet's payload; at most 1440 bytes, so a full datagram is 1465 bytes of UDP
// payload (a 1493-byte IPv4 packet, under a 1500-byte MTU).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "forecast.hh"

namespace netrepro::sprout {

struct PeerDatagram {
  static constexpr uint8_t kType = 0x03;
  static constexpr uint8_t kVersion = 1;
  static constexpr size_t kHeaderBytes = 25;
  static constexpr size_t kForecastBytes = 16 + 4 * kHorizons;
  static constexpr size_t kMaxCarriedBytes = 1440;  // forecast + filler, as a data payload

  uint16_t time_to_next_ms = 0;
  uint16_t throwaway_window = 0;
  uint64_t seq = 0;
  uint64_t send_time_us = 0;
  uint16_t payload_length = 0;  // the payload itself is filler
  std::optional<Forecast> forecast;

  // Forecast and filler bytes: what counts as this datagram's payload.
  size_t carried_bytes() const { return payload_length + (forecast ? kForecastBytes : 0); }

  std::string encode() const;
  // Throws std::invalid_argument naming the problem for anything malformed.
  static PeerDatagram decode(const std::string& wire);
};

}  // namespace netrepro::sprout
