#include "trace_queue.hh"

#include <algorithm>
#include <utility>

namespace netrepro {

TraceQueue::TraceQueue(OpportunitySchedule schedule, QueueSpec spec, LinkEvents* events,
                       bool report_every_opportunity)
    : schedule_(std::move(schedule)),
      spec_(spec),
      events_(events),
      report_every_opportunity_(report_every_opportunity) {
  if (spec_.kind == QueueSpec::Kind::Codel) {
    codel_.emplace(CodelParams{spec_.codel_target_ms * 1000, spec_.codel_interval_ms * 1000});
  }
}

std::optional<Packet> TraceQueue::take_next(uint64_t when) {
  if (!codel_) {
    if (queue_.empty()) return std::nullopt;
    Packet p = std::move(queue_.front());
    queue_.pop_front();
    queue_bytes_ -= p.size;
    return p;
  }
  dropped_.clear();
  std::optional<Packet> next = codel_->dequeue(when, queue_, queue_bytes_, dropped_);
  for (const Packet& p : dropped_) count_drop(p, when, true);
  return next;
}

void TraceQueue::count_drop(const Packet& p, uint64_t when, bool at_dequeue) {
  ++counters_.drops;
  counters_.drop_bytes += p.size;
  if (at_dequeue) {
    ++counters_.dequeue_drops;
    counters_.dequeue_drop_bytes += p.size;
  }
  if (p.ecn_out != Ecn::NotEct) ++counters_.drops_ecn_capable;
  if (events_ != nullptr) events_->drop(when, 1, p.size);
  if (drop_observer_ != nullptr) drop_observer_->dropped(p, when, at_dequeue);
}

void TraceQueue::advance(uint64_t now_us, std::vector<Departure>& out) {
  while (schedule_.next_us() <= now_us) {
    if (!report_every_opportunity_ && queue_.empty() && in_transit_left_ == 0) {
      // Idle: nothing to carry, so the remaining opportunities up to now are only counted.
      const uint64_t n = schedule_.skip_through(now_us);
      counters_.opportunities += n;
      counters_.opportunity_bytes += n * OpportunitySchedule::kOpportunityBytes;
      return;
    }
    serve_one_opportunity(out);
  }
}

void TraceQueue::serve_one_opportunity(std::vector<Departure>& out) {
  const uint64_t when = schedule_.next_us();
  schedule_.consume();
  uint64_t budget = OpportunitySchedule::kOpportunityBytes;
  ++counters_.opportunities;
  counters_.opportunity_bytes += budget;
  if (events_ != nullptr) events_->opportunity(when, static_cast<uint32_t>(budget));

  while (budget > 0) {
    if (in_transit_left_ == 0) {
      std::optional<Packet> next = take_next(when);
      if (!next) break;  // leftover budget is wasted, never banked
      in_transit_ = std::move(*next);
      in_transit_left_ = in_transit_.size;
      if (in_transit_left_ == 0) in_transit_left_ = 1;  // defensive: a 0-byte packet still leaves
    }
    const uint64_t used = std::min(budget, in_transit_left_);
    budget -= used;
    in_transit_left_ -= used;
    if (in_transit_left_ == 0) {
      const uint64_t delay_ms = when / 1000 - in_transit_.arrival_us / 1000;
      ++counters_.departures;
      counters_.departure_bytes += in_transit_.size;
      if (events_ != nullptr) events_->departure(when, in_transit_.size, delay_ms);
      in_transit_.departure_us = when;
      out.push_back(Departure{std::move(in_transit_), when});
      in_transit_ = Packet{};
    }
  }
}

bool TraceQueue::enqueue(Packet packet, uint64_t now_us, std::vector<Departure>& out) {
  advance(now_us, out);
  if (service_over()) {
    ++counters_.after_service;
    counters_.after_service_bytes += packet.size;
    return false;
  }
  ++counters_.arrivals;
  counters_.arrival_bytes += packet.size;
  if (events_ != nullptr) events_->arrival(now_us, packet.size);
  packet.arrival_us = now_us;
  // The packet in transit has left the queue, as in mahimahi: limits and the ECN threshold
  // count only waiting packets.
  packet.backlog = static_cast<uint32_t>(queue_.size());
  packet.ecn_in = packet.ecn_out = ecn_of(packet.frame);
  switch (packet.ecn_in) {
    case Ecn::NotEct: ++counters_.arrivals_not_ect; break;
    case Ecn::Ect1: ++counters_.arrivals_ect1; break;
    case Ecn::Ect0: ++counters_.arrivals_ect0; break;
    case Ecn::Ce: ++counters_.arrivals_ce; break;
  }
  if (!spec_.accepts(queue_.size(), queue_bytes_, packet.size)) {
    count_drop(packet, now_us, false);
    return false;
  }
  if (ecn_capable(packet.ecn_in) && spec_.marks(queue_.size())) {
    mark_ce(packet.frame);
    packet.ecn_out = Ecn::Ce;
    ++counters_.ecn_marks;
  }
  queue_bytes_ += packet.size;
  queue_.push_back(std::move(packet));
  counters_.max_queued_bytes = std::max(counters_.max_queued_bytes, queued_bytes());
  counters_.max_queued_packets = std::max(counters_.max_queued_packets, queued_packets());
  return true;
}

uint64_t TraceQueue::next_busy_us() const {
  if (queue_.empty() && in_transit_left_ == 0) return OpportunitySchedule::kNever;
  return schedule_.next_us();
}

}  // namespace netrepro
