#include "opportunity_schedule.hh"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <utility>

namespace netrepro {

OpportunitySchedule OpportunitySchedule::from_trace(std::vector<uint64_t> trace_ms, bool once,
                                                    uint64_t base_ms) {
  if (trace_ms.empty() || trace_ms.back() == 0) {
    throw std::invalid_argument("OpportunitySchedule: trace must be non-empty and end above 0");
  }
  OpportunitySchedule s;
  s.trace_ms_ = std::move(trace_ms);
  s.once_ = once;
  s.pass_base_ms_ = base_ms;
  s.next_us_ = s.compute_next();
  return s;
}

namespace {

uint64_t nano_mbps(double rate_mbps) {
  if (!(rate_mbps > 0) || !std::isfinite(rate_mbps)) {
    throw std::invalid_argument("OpportunitySchedule: rate must be a positive number of Mbit/s");
  }
  const auto nano = static_cast<uint64_t>(std::llround(rate_mbps * 1e9));
  if (nano == 0) throw std::invalid_argument("OpportunitySchedule: rate below 1e-9 Mbit/s");
  return nano;
}

}  // namespace

OpportunitySchedule OpportunitySchedule::fixed_rate(double rate_mbps, uint64_t base_us) {
  return fixed_rate(rate_mbps, base_us, {});
}

OpportunitySchedule OpportunitySchedule::fixed_rate(double rate_mbps, uint64_t base_us,
                                                    const std::vector<RateStep>& steps) {
  OpportunitySchedule s;
  s.fixed_ = true;
  s.rate_nano_mbps_ = nano_mbps(rate_mbps);
  s.base_us_ = base_us;
  s.k_ = 1;
  for (const RateStep& step : steps) {
    const uint64_t at_us = base_us + step.at_ms * 1000;
    if (!s.steps_.empty() && at_us <= s.steps_.back().first) {
      throw std::invalid_argument("OpportunitySchedule: rate steps must come in time order");
    }
    s.steps_.emplace_back(at_us, nano_mbps(step.rate_mbps));
  }
  s.enter_due_stretches();
  s.next_us_ = s.compute_next();
  return s;
}

void OpportunitySchedule::enter_due_stretches() {
  while (next_step_ < steps_.size() && compute_next() >= steps_[next_step_].first) {
    base_us_ = steps_[next_step_].first;
    rate_nano_mbps_ = steps_[next_step_].second;
    k_ = 1;
    ++next_step_;
  }
}

void OpportunitySchedule::end_at(uint64_t end_us) {
  end_us_ = end_us;
  if (next_us_ != kNever && next_us_ > end_us_) next_us_ = kNever;
}

uint64_t OpportunitySchedule::bounded_next() const {
  const uint64_t next = compute_next();
  return next > end_us_ ? kNever : next;
}

uint64_t OpportunitySchedule::compute_next() const {
  if (fixed_) {
    // Mbit/s is bits per microsecond; exact integer arithmetic, no drift over long runs.
    const unsigned __int128 bits = static_cast<unsigned __int128>(k_) * (kOpportunityBytes * 8) *
                                   1'000'000'000ULL;
    return base_us_ + static_cast<uint64_t>(bits / rate_nano_mbps_);
  }
  return (pass_base_ms_ + trace_ms_[index_]) * 1000;
}

void OpportunitySchedule::consume() {
  if (finished()) return;
  if (fixed_) {
    ++k_;
    enter_due_stretches();
  } else if (++index_ == trace_ms_.size()) {
    index_ = 0;
    if (once_) {
      next_us_ = kNever;
      return;
    }
    pass_base_ms_ += trace_ms_.back();
  }
  next_us_ = bounded_next();
}

uint64_t OpportunitySchedule::skip_through(uint64_t now_us) {
  uint64_t count = 0;
  if (fixed_ && next_us_ <= now_us) {
    // Jump close to now (or the end, or the next rate step) arithmetically, then step so the
    // boundaries stay exact.
    uint64_t limit = std::min(now_us, end_us_);
    if (next_step_ < steps_.size()) limit = std::min(limit, steps_[next_step_].first - 1);
    const unsigned __int128 elapsed = limit > base_us_ ? limit - base_us_ : 0;
    const uint64_t target_k = static_cast<uint64_t>(
        elapsed * rate_nano_mbps_ / (static_cast<unsigned __int128>(kOpportunityBytes * 8) *
                                     1'000'000'000ULL));
    if (target_k > k_ + 1) {
      count += target_k - 1 - k_;
      k_ = target_k - 1;
      next_us_ = bounded_next();
    }
  }
  while (next_us_ <= now_us) {
    consume();
    ++count;
  }
  return count;
}

}  // namespace netrepro
