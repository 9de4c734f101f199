#include "peer_datagram.hh"

#include <stdexcept>

#include "byte_order.hh"

namespace netrepro::sprout {

std::string PeerDatagram::encode() const {
  if (carried_bytes() > kMaxCarriedBytes) {
    throw std::invalid_argument("PeerDatagram: " + std::to_string(carried_bytes()) +
                                " bytes of forecast and payload exceed the " +
                                std::to_string(kMaxCarriedBytes) + "-byte maximum");
  }
  std::string out;
  out.reserve(kHeaderBytes + kMaxCarriedBytes);
  put_be<uint8_t>(out, kType);
  put_be<uint8_t>(out, kVersion);
  put_be<uint16_t>(out, time_to_next_ms);
  put_be<uint16_t>(out, throwaway_window);
  put_be<uint64_t>(out, seq);
  put_be<uint8_t>(out, forecast ? 1 : 0);
  if (forecast) {
    put_be<uint32_t>(out, static_cast<uint32_t>(forecast->received_or_lost));
    put_be<uint32_t>(out, static_cast<uint32_t>(forecast->tick_start_ms));
    for (uint32_t c : forecast->counts) {
      if (c > UINT16_MAX) {
        throw std::invalid_argument("PeerDatagram: forecast count " + std::to_string(c) +
                                    " does not fit its 16-bit field");
      }
      put_be<uint16_t>(out, static_cast<uint16_t>(c));
    }
  }
  out.append(payload_length, 'x');
  return out;
}

PeerDatagram PeerDatagram::decode(const std::string& wire) {
  if (wire.size() < kHeaderBytes) {
    throw std::invalid_argument("peer datagram of " + std::to_string(wire.size()) +
                                " bytes is shorter than its 15-byte header");
  }
  if (get_be<uint8_t>(wire, 0) != kType || get_be<uint8_t>(wire, 1) != kVersion) {
    throw std::invalid_argument("not a Sprout peer datagram of version 2 (type " +
                                std::to_string(get_be<uint8_t>(wire, 0)) + ", version " +
                                std::to_string(get_be<uint8_t>(wire, 1)) + ")");
  }
  PeerDatagram d;
  d.time_to_next_ms = get_be<uint16_t>(wire, 2);
  d.throwaway_window = get_be<uint16_t>(wire, 4);
  d.seq = get_be<uint64_t>(wire, 6);
  const uint8_t flags = get_be<uint8_t>(wire, 14);
  if (flags > 1) {
    throw std::invalid_argument("peer datagram has unknown flags " + std::to_string(flags));
  }
  size_t offset = kHeaderBytes;
  if (flags & 1) {
    if (wire.size() < kHeaderBytes + kForecastBytes) {
      throw std::invalid_argument("peer datagram flags a forecast but has only " +
                                  std::to_string(wire.size()) + " bytes");
    }
    Forecast f;
    f.received_or_lost = get_be<uint32_t>(wire, offset);
    f.tick_start_ms = get_be<uint32_t>(wire, offset + 4);
    for (int k = 0; k < kHorizons; ++k) {
      f.counts[k] = get_be<uint16_t>(wire, offset + 8 + 2 * static_cast<size_t>(k));
    }
    d.forecast = f;
    offset += kForecastBytes;
  }
  if (wire.size() - offset > kMaxCarriedBytes - (d.forecast ? kForecastBytes : 0)) {
    throw std::invalid_argument("peer datagram of " + std::to_string(wire.size()) +
                                " bytes carries more than 1440 bytes");
  }
  d.payload_length = static_cast<uint16_t>(wire.size() - offset);
  return d;
}

uint64_t PeerDatagram::restore_received_or_lost(uint32_t low, uint64_t next_seq) {
  const uint32_t behind = static_cast<uint32_t>(next_seq) - low;  // wraps
  return behind <= next_seq ? next_seq - behind : 0;
}

bool PeerDatagram::tick_after(uint64_t now, uint64_t before) {
  const uint32_t ahead = static_cast<uint32_t>(now) - static_cast<uint32_t>(before);
  return ahead != 0 && ahead < (1u << 31);
}

}  // namespace netrepro::sprout
