#include "latency_histogram.hh"

#include <algorithm>
#include <cmath>

namespace netrepro {

LatencyHistogram::LatencyHistogram() : fine_(kFineLimitUs, 0), coarse_(kCoarseLimitMs + 1, 0) {}

void LatencyHistogram::add(uint64_t value_us) {
  ++count_;
  max_ = std::max(max_, value_us);
  if (value_us < kFineLimitUs) {
    ++fine_[value_us];
  } else {
    ++coarse_[std::min<uint64_t>(value_us / 1000, kCoarseLimitMs)];
  }
}

void LatencyHistogram::add_interval(uint64_t from_us, uint64_t to_us) {
  if (to_us < from_us) ++reversed_;
  add(to_us > from_us ? to_us - from_us : 0);
}

std::vector<uint64_t> LatencyHistogram::percentiles(const std::vector<double>& qs) const {
  std::vector<uint64_t> out(qs.size(), 0);
  if (count_ == 0) return out;
  size_t next = 0;
  auto rank_of = [this](double q) {
    return std::max<uint64_t>(1, static_cast<uint64_t>(std::ceil(q * static_cast<double>(count_))));
  };
  uint64_t seen = 0;
  for (uint64_t v = 0; v < kFineLimitUs && next < qs.size(); ++v) {
    seen += fine_[v];
    while (next < qs.size() && seen >= rank_of(qs[next])) out[next++] = v;
  }
  for (uint64_t ms = kFineLimitUs / 1000; ms < kCoarseLimitMs && next < qs.size(); ++ms) {
    seen += coarse_[ms];
    while (next < qs.size() && seen >= rank_of(qs[next])) out[next++] = std::min(max_, ms * 1000 + 999);
  }
  while (next < qs.size()) out[next++] = max_;
  return out;
}

}  // namespace netrepro
