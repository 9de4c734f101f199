#include "codel.hh"

#include <cmath>
#include <utility>

namespace netrepro {

Codel::Head Codel::pop_head(uint64_t now_us, std::deque<Packet>& queue, uint64_t& queue_bytes) {
  Head head;
  if (queue.empty()) {
    first_above_time_us_.reset();
    return head;
  }
  head.packet = std::move(queue.front());
  queue.pop_front();
  queue_bytes -= head.packet->size;
  const uint64_t sojourn_us =
      now_us > head.packet->arrival_us ? now_us - head.packet->arrival_us : 0;
  if (sojourn_us < params_.target_us || queue_bytes <= kMaxPacketBytes) {
    // Below target, or too little left to be a standing queue.
    first_above_time_us_.reset();
  } else if (!first_above_time_us_) {
    first_above_time_us_ = now_us + params_.interval_us;
  } else if (now_us >= *first_above_time_us_) {
    head.ok_to_drop = true;
  }
  return head;
}

uint64_t Codel::control_law(uint64_t t_us, uint32_t count) const {
  return t_us + static_cast<uint64_t>(static_cast<double>(params_.interval_us) /
                                      std::sqrt(static_cast<double>(count)));
}

std::optional<Packet> Codel::dequeue(uint64_t now_us, std::deque<Packet>& queue,
                                     uint64_t& queue_bytes, std::vector<Packet>& dropped) {
  Head head = pop_head(now_us, queue, queue_bytes);
  if (!head.packet) {
    dropping_ = false;
    return std::nullopt;
  }
  if (dropping_) {
    if (!head.ok_to_drop) {
      dropping_ = false;  // sojourn fell below target: leave the dropping state
    }
    while (dropping_ && now_us >= drop_next_us_) {
      dropped.push_back(std::move(*head.packet));
      ++count_;
      head = pop_head(now_us, queue, queue_bytes);
      if (!head.ok_to_drop) {
        dropping_ = false;
      } else {
        drop_next_us_ = control_law(drop_next_us_, count_);
      }
    }
  } else if (head.ok_to_drop) {
    dropped.push_back(std::move(*head.packet));
    head = pop_head(now_us, queue, queue_bytes);
    dropping_ = true;
    // Re-entering soon after the last dropping state: start from the drop rate that was
    // controlling the queue then, not from 1 (RFC 8289 section 5.5).
    const uint32_t delta = count_ - lastcount_;
    const int64_t since_drop_next = static_cast<int64_t>(now_us) - static_cast<int64_t>(drop_next_us_);
    count_ = (delta > 1 && since_drop_next < static_cast<int64_t>(16 * params_.interval_us))
                 ? delta
                 : 1;
    drop_next_us_ = control_law(now_us, count_);
    lastcount_ = count_;
  }
  return std::move(head.packet);
}

}  // namespace netrepro
