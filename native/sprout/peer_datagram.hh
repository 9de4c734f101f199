// The datagram of the bidirectional endpoint (sprout-peer): data (or an empty heartbeat) in
// one direction, with the endpoint's own forecast for the other direction riding on it, as the
// reference's bulk test application carries its forecasts on its outgoing data.
//
// Wire format (big-endian, 15-byte header, then the forecast if flagged, then the filler):
//   offset size field
//        0    1 type = 0x03 (peer)
//        1    1 version = 2
//        2    2 time_to_next_ms   as in a data datagram (data_datagram.hh)
//        4    2 throwaway_window  as in a data datagram
//        6    8 seq               byte offset in this endpoint's stream (+payload +50 a packet)
//       14    1 flags             bit 0: a forecast follows
//       15   24 forecast          (if flagged) the forecast of the datagrams this endpoint
//                                 receives, for the other endpoint's sender:
//                                 received_or_lost u32 (the low 32 bits: the sender restores
//                                 the rest from its own sequence number), tick_start_ms u32
//                                 (the low 32 bits: only compared with the previous one),
//                                 counts[0..7] u16 (cumulative packets, at most 8 x 65535)
//    15/39    n filler            the payload (its length is what is left of the datagram)
// Compact on purpose: during an outage an endpoint sends only heartbeats carrying forecasts,
// 20 a second, and the link delivers them in its few opportunities. A heartbeat with a
// forecast is 39 bytes of UDP payload, 67 bytes of IPv4 packet (71 counted as mahimahi does),
// about the reference's (65 + 4 measured under the same link): 20 a second fit in a link that
// delivers one 1504-byte opportunity a second, as the reference's do, where 105-byte ones
// queued up behind each other (1.9 s instead of 1 s on the AT&T LTE uplink's outage).
//
// What a datagram carries (its forecast and filler) counts as its payload for the sequence
// space, the window and the receiver's packet count, as the reference counts its forecast as
// part of the packet's payload; at most 1440 bytes, so a full datagram is 1455 bytes of UDP
// payload (a 1483-byte IPv4 packet, under a 1500-byte MTU).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "forecast.hh"

namespace netrepro::sprout {

struct PeerDatagram {
  static constexpr uint8_t kType = 0x03;
  static constexpr uint8_t kVersion = 2;
  static constexpr size_t kHeaderBytes = 15;
  static constexpr size_t kForecastBytes = 4 + 4 + 2 * kHorizons;
  static constexpr size_t kMaxCarriedBytes = 1440;  // forecast + filler, as a data payload

  uint16_t time_to_next_ms = 0;
  uint16_t throwaway_window = 0;
  uint64_t seq = 0;
  uint16_t payload_length = 0;  // the filler's length (not on the wire: the rest of it)
  // On the wire only the low 32 bits of received_or_lost and tick_start_ms travel; decode()
  // gives them as such (restore received_or_lost with restore_received_or_lost()).
  std::optional<Forecast> forecast;

  // Forecast and filler bytes: what counts as this datagram's payload.
  size_t carried_bytes() const { return payload_length + (forecast ? kForecastBytes : 0); }

  // Throws std::invalid_argument for a count that does not fit its field, or too much payload.
  std::string encode() const;
  // Throws std::invalid_argument naming the problem for anything malformed.
  static PeerDatagram decode(const std::string& wire);

  // The full received_or_lost from its low 32 bits: the value nearest below (or at)
  // `next_seq`, the sender's next sequence number (nothing in flight spans 2^31 bytes).
  static uint64_t restore_received_or_lost(uint32_t low, uint64_t next_seq);
  // Whether tick `now` (low 32 bits) is later than `before` (wrapping).
  static bool tick_after(uint64_t now, uint64_t before);
};

}  // namespace netrepro::sprout
