#include "link_direction.hh"

#include <algorithm>
#include <stdexcept>
#include <utility>

namespace netrepro {

StageOrder parse_stage_order(const std::string& text) {
  if (text == "queue-delay") return StageOrder::QueueThenDelay;
  if (text == "delay-queue") return StageOrder::DelayThenQueue;
  throw std::invalid_argument("order '" + text + "' is not queue-delay or delay-queue");
}

std::string to_string(StageOrder order) {
  return order == StageOrder::QueueThenDelay ? "queue-delay" : "delay-queue";
}

LinkDirection::LinkDirection(TraceQueue queue, DelayLine delay, StageOrder order)
    : LinkDirection(std::move(queue), DelayStage(std::move(delay)), order) {}

LinkDirection::LinkDirection(TraceQueue queue, DelayStage delay, StageOrder order)
    : queue_(std::move(queue)), delay_(std::move(delay)), order_(order) {}

void LinkDirection::set_loss(RandomLoss loss, LossObserver* observer) {
  loss_ = std::move(loss);
  loss_observer_ = observer;
}

bool LinkDirection::lost(const Departure& d) {
  if (!loss_.lose()) return false;
  loss_.count(d.packet.size);
  if (loss_observer_ != nullptr) loss_observer_->lost(d.packet);
  return true;
}

void LinkDirection::drain_delay(uint64_t now_us, std::vector<Release>& ready) {
  while (delay_.next_release_us() <= now_us) ready.push_back(delay_.pop());
}

void LinkDirection::arrive(Packet packet, uint64_t now_us, std::vector<Release>& ready) {
  // Time never runs backwards here: an arrival stamped before what was already served
  // (a kernel timestamp older than our last wake-up) counts as arriving at that point.
  now_us = std::max(now_us, time_us_);
  if (order_ == StageOrder::QueueThenDelay) {
    departures_.clear();
    time_us_ = now_us;
    queue_.enqueue(std::move(packet), now_us, departures_);
    for (Departure& d : departures_) {
      if (!lost(d)) delay_.push(std::move(d.packet), d.departure_us);
    }
    drain_delay(now_us, ready);
  } else {
    // Everything due before this arrival enters the queue first, in time order.
    advance(now_us, ready);
    delay_.push(std::move(packet), now_us);
    advance(now_us, ready);
  }
}

void LinkDirection::advance(uint64_t now_us, std::vector<Release>& ready) {
  now_us = std::max(now_us, time_us_);
  time_us_ = now_us;
  departures_.clear();
  if (order_ == StageOrder::QueueThenDelay) {
    queue_.advance(now_us, departures_);
    for (Departure& d : departures_) {
      if (!lost(d)) delay_.push(std::move(d.packet), d.departure_us);
    }
    drain_delay(now_us, ready);
    return;
  }
  // The queue sees each packet at its scheduled release from the delay stage, so its
  // opportunities before that instant are served first (enqueue advances the queue).
  while (delay_.next_release_us() <= now_us) {
    Release r = delay_.pop();
    queue_.enqueue(std::move(r.packet), r.release_us, departures_);
  }
  queue_.advance(now_us, departures_);
  for (Departure& d : departures_) {
    if (!lost(d)) ready.push_back(Release{std::move(d.packet), d.departure_us});
  }
}

void LinkDirection::release_due(uint64_t now_us, std::vector<Release>& ready) {
  if (order_ == StageOrder::QueueThenDelay) drain_delay(now_us, ready);
}

uint64_t LinkDirection::next_send_us() const {
  const uint64_t busy = queue_.next_busy_us();
  if (order_ == StageOrder::DelayThenQueue) return busy;
  const uint64_t shortest = delay_.shortest_delay_us();
  const uint64_t via_queue = busy > OpportunitySchedule::kNever - shortest
                                 ? OpportunitySchedule::kNever : busy + shortest;
  return std::min(delay_.next_release_us(), via_queue);
}

uint64_t LinkDirection::next_event_us() const {
  return std::min(queue_.next_busy_us(), delay_.next_release_us());
}

}  // namespace netrepro
