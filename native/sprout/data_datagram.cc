#include "data_datagram.hh"

#include <stdexcept>

#include "byte_order.hh"
#include "sprout_constants.hh"

namespace netrepro::sprout {

std::string DataDatagram::encode() const {
  if (payload_length > kMaxPayloadBytes) {
    throw std::invalid_argument("DataDatagram: payload of " + std::to_string(payload_length) +
                                " bytes exceeds the " + std::to_string(kMaxPayloadBytes) +
                                "-byte maximum");
  }
  std::string out;
  out.reserve(kHeaderBytes + payload_length);
  put_be<uint8_t>(out, kType);
  put_be<uint8_t>(out, kVersion);
  put_be<uint16_t>(out, time_to_next_ms);
  put_be<uint16_t>(out, throwaway_window);
  put_be<uint16_t>(out, payload_length);
  put_be<uint64_t>(out, seq);
  put_be<uint64_t>(out, send_time_us);
  out.append(payload_length, 'x');
  return out;
}

DataDatagram DataDatagram::decode(const std::string& wire) {
  if (wire.size() < kHeaderBytes) {
    throw std::invalid_argument("data datagram of " + std::to_string(wire.size()) +
                                " bytes is shorter than its 24-byte header");
  }
  if (get_be<uint8_t>(wire, 0) != kType || get_be<uint8_t>(wire, 1) != kVersion) {
    throw std::invalid_argument("not a Sprout data datagram (type " +
                                std::to_string(get_be<uint8_t>(wire, 0)) + ", version " +
                                std::to_string(get_be<uint8_t>(wire, 1)) + ")");
  }
  DataDatagram d;
  d.time_to_next_ms = get_be<uint16_t>(wire, 2);
  d.throwaway_window = get_be<uint16_t>(wire, 4);
  d.payload_length = get_be<uint16_t>(wire, 6);
  d.seq = get_be<uint64_t>(wire, 8);
  d.send_time_us = get_be<uint64_t>(wire, 16);
  if (wire.size() != kHeaderBytes + d.payload_length) {
    throw std::invalid_argument("data datagram says payload_length " +
                                std::to_string(d.payload_length) + " but carries " +
                                std::to_string(wire.size() - kHeaderBytes) + " bytes");
  }
  return d;
}

}  // namespace netrepro::sprout
