#include "ecn_field.hh"

namespace netrepro {

namespace {

constexpr size_t kEthernetHeader = 14;
constexpr size_t kTosOffset = kEthernetHeader + 1;
constexpr size_t kChecksumOffset = kEthernetHeader + 10;

unsigned byte_at(const std::string& frame, size_t i) {
  return static_cast<unsigned char>(frame[i]);
}

}  // namespace

Ecn ecn_of(const std::string& frame) {
  if (frame.size() < kEthernetHeader + 20) return Ecn::NotEct;
  if (byte_at(frame, 12) != 0x08 || byte_at(frame, 13) != 0x00) return Ecn::NotEct;
  const unsigned version_ihl = byte_at(frame, kEthernetHeader);
  const size_t header_bytes = (version_ihl & 0x0F) * 4u;
  if ((version_ihl >> 4) != 4 || header_bytes < 20 || kEthernetHeader + header_bytes > frame.size()) {
    return Ecn::NotEct;
  }
  return static_cast<Ecn>(byte_at(frame, kTosOffset) & 0x03);
}

void mark_ce(std::string& frame) {
  // The 16-bit word holding the TOS byte changes from m to m'; HC' = ~(~HC + ~m + m') in
  // one's-complement arithmetic (RFC 1624, eqn. 3), which never yields the -0 of eqn. 2.
  const uint32_t old_word = (byte_at(frame, kEthernetHeader) << 8) | byte_at(frame, kTosOffset);
  const uint32_t new_word = old_word | 0x03;
  const uint32_t old_checksum =
      (byte_at(frame, kChecksumOffset) << 8) | byte_at(frame, kChecksumOffset + 1);
  uint32_t sum = (~old_checksum & 0xFFFF) + (~old_word & 0xFFFF) + new_word;
  while ((sum >> 16) != 0) sum = (sum & 0xFFFF) + (sum >> 16);
  const uint32_t new_checksum = ~sum & 0xFFFF;
  frame[kTosOffset] = static_cast<char>(new_word & 0xFF);
  frame[kChecksumOffset] = static_cast<char>(new_checksum >> 8);
  frame[kChecksumOffset + 1] = static_cast<char>(new_checksum & 0xFF);
}

}  // namespace netrepro
