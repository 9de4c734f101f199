#include "feedback_datagram.hh"

#include <stdexcept>

#include "byte_order.hh"

namespace netrepro::sprout {

std::string FeedbackDatagram::encode() const {
  std::string out;
  out.reserve(kBytes);
  put_be<uint8_t>(out, kType);
  put_be<uint8_t>(out, kVersion);
  put_be<uint16_t>(out, kHorizons);
  put_be<uint32_t>(out, 0);
  put_be<uint64_t>(out, forecast.received_or_lost);
  put_be<uint64_t>(out, forecast.tick_start_ms);
  for (uint32_t c : forecast.counts) {
    put_be<uint32_t>(out, c);
  }
  return out;
}

FeedbackDatagram FeedbackDatagram::decode(const std::string& wire) {
  if (wire.size() != kBytes) {
    throw std::invalid_argument("feedback datagram of " + std::to_string(wire.size()) +
                                " bytes, expected " + std::to_string(kBytes));
  }
  if (get_be<uint8_t>(wire, 0) != kType || get_be<uint8_t>(wire, 1) != kVersion) {
    throw std::invalid_argument("not a Sprout feedback datagram (type " +
                                std::to_string(get_be<uint8_t>(wire, 0)) + ", version " +
                                std::to_string(get_be<uint8_t>(wire, 1)) + ")");
  }
  if (get_be<uint16_t>(wire, 2) != kHorizons) {
    throw std::invalid_argument("feedback datagram carries " +
                                std::to_string(get_be<uint16_t>(wire, 2)) +
                                " horizons, expected " + std::to_string(kHorizons));
  }
  FeedbackDatagram d;
  d.forecast.received_or_lost = get_be<uint64_t>(wire, 8);
  d.forecast.tick_start_ms = get_be<uint64_t>(wire, 16);
  for (int k = 0; k < kHorizons; ++k) {
    d.forecast.counts[k] = get_be<uint32_t>(wire, 24 + 4 * static_cast<size_t>(k));
  }
  return d;
}

}  // namespace netrepro::sprout
