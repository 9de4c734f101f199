#include "delay_stage.hh"

#include <stdexcept>
#include <utility>

namespace netrepro {

namespace {

constexpr size_t kEthernetHeader = 14;
constexpr size_t kIpv4MinHeader = 20;
constexpr size_t kSourceOffset = kEthernetHeader + 12;
constexpr size_t kDestinationOffset = kEthernetHeader + 16;

uint32_t read_be32(const std::string& frame, size_t at) {
  return (static_cast<uint32_t>(static_cast<unsigned char>(frame[at])) << 24) |
         (static_cast<uint32_t>(static_cast<unsigned char>(frame[at + 1])) << 16) |
         (static_cast<uint32_t>(static_cast<unsigned char>(frame[at + 2])) << 8) |
         static_cast<uint32_t>(static_cast<unsigned char>(frame[at + 3]));
}

// An untagged Ethernet frame carrying an IPv4 header whole enough to hold both addresses.
bool has_ipv4_addresses(const std::string& frame) {
  if (frame.size() < kEthernetHeader + kIpv4MinHeader) return false;
  if (static_cast<unsigned char>(frame[12]) != 0x08 || frame[13] != 0x00) return false;
  const auto version_ihl = static_cast<unsigned char>(frame[kEthernetHeader]);
  return (version_ihl >> 4) == 4 && (version_ihl & 0x0f) >= 5;
}

}  // namespace

DelayStage::DelayStage(DelayLine default_line) { lines_.push_back(std::move(default_line)); }

DelayStage::DelayStage(uint64_t default_delay_us, const PeerDelays& peers) : peers_(peers) {
  lines_.emplace_back(default_delay_us);
  for (const PeerDelays::Entry& e : peers.entries()) {
    const uint64_t delay_us = e.delay_ms * 1000;
    size_t line = 0;
    while (line < lines_.size() && lines_[line].delay_us() != delay_us) ++line;
    // An address whose delay is the default shares the default line (one FIFO per value).
    if (line == lines_.size()) lines_.emplace_back(delay_us);
    line_of_address_.emplace(e.address, line);
  }
}

size_t DelayStage::line_for(const std::string& frame) const {
  if (line_of_address_.empty() || !has_ipv4_addresses(frame)) return 0;
  const size_t at = peers_.key() == PeerKey::Source ? kSourceOffset : kDestinationOffset;
  const auto it = line_of_address_.find(read_be32(frame, at));
  return it == line_of_address_.end() ? 0 : it->second;
}

bool DelayStage::due_before(size_t a, size_t b) const {
  const uint64_t ra = lines_[a].next_release_us(), rb = lines_[b].next_release_us();
  if (ra != rb) return ra < rb;
  return lines_[a].delay_us() > lines_[b].delay_us();
}

void DelayStage::push(Packet packet, uint64_t entry_us) {
  const size_t line = line_for(packet.frame);
  lines_[line].push(std::move(packet), entry_us);
  ++size_;
  // Only a line that was empty has a new head.
  if (due_before(line, earliest_)) earliest_ = line;
}

Release DelayStage::pop() {
  if (size_ == 0) throw std::logic_error("DelayStage: pop on an empty delay stage");
  Release r = lines_[earliest_].pop();
  --size_;
  for (size_t line = 0; line < lines_.size(); ++line) {
    if (due_before(line, earliest_)) earliest_ = line;
  }
  return r;
}

}  // namespace netrepro
