#include "delay_line.hh"

#include <stdexcept>
#include <utility>

namespace netrepro {

void DelayLine::push(Packet packet, uint64_t entry_us) {
  const uint64_t release = entry_us + delay_us_;
  if (!held_.empty() && release < held_.back().release_us) {
    throw std::logic_error("DelayLine: entry times went backwards");
  }
  held_.push_back(Release{std::move(packet), release});
}

Release DelayLine::pop() {
  if (held_.empty()) throw std::logic_error("DelayLine: pop on an empty delay line");
  Release r = std::move(held_.front());
  held_.pop_front();
  return r;
}

}  // namespace netrepro
