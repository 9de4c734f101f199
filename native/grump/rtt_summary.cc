#include "rtt_summary.hh"

#include <algorithm>
#include <cmath>

namespace netrepro::grump {

double RttSummary::percentile(const std::vector<uint64_t>& sorted, double q) {
  const double rank = q / 100.0 * static_cast<double>(sorted.size() - 1);
  const size_t below = static_cast<size_t>(std::floor(rank));
  const size_t above = std::min(below + 1, sorted.size() - 1);
  const double fraction = rank - static_cast<double>(below);
  return static_cast<double>(sorted[below]) +
         fraction * (static_cast<double>(sorted[above]) - static_cast<double>(sorted[below]));
}

RttSummary RttSummary::of(std::vector<uint64_t> samples_ms) {
  RttSummary out;
  if (samples_ms.empty()) {
    return out;
  }
  std::sort(samples_ms.begin(), samples_ms.end());
  out.min_ms = static_cast<double>(samples_ms.front());
  out.median_ms = percentile(samples_ms, 50);
  out.p95_ms = percentile(samples_ms, 95);
  return out;
}

}  // namespace netrepro::grump
