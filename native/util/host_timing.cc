#include "host_timing.hh"

#include <vector>

namespace netrepro {

void HostTiming::allowed_by(uint64_t kernel_us) {
  if (kernel_us == 0) {
    ++without_timestamp_;
    return;
  }
  if (!pending_) pending_ = kernel_us;
}

void HostTiming::sent(uint64_t sent_us) {
  if (!pending_) return;
  arrival_to_send_.add_interval(*pending_, sent_us);
  pending_.reset();
}

void HostTiming::answered(uint64_t kernel_us, uint64_t sent_us) {
  if (kernel_us == 0) {
    ++without_timestamp_;
    return;
  }
  arrival_to_send_.add_interval(kernel_us, sent_us);
}

JsonObject HostTiming::percentiles_json(const LatencyHistogram& h) {
  const std::vector<uint64_t> p = h.percentiles({0.5, 0.9, 0.99});
  return JsonObject()
      .add("p50", p[0])
      .add("p90", p[1])
      .add("p99", p[2])
      .add("max", h.max())
      .add("count", h.count());
}

JsonObject HostTiming::json() const {
  return JsonObject()
      .add("wakeup_lateness_us", percentiles_json(wakeups_))
      .add("arrival_to_send_us", percentiles_json(arrival_to_send_))
      .add("arrival_to_send", pair_)
      .add("arrivals_without_timestamp", without_timestamp_)
      .add("negative_intervals", wakeups_.reversed() + arrival_to_send_.reversed());
}

}  // namespace netrepro
