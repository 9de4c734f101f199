#include "rate_steps.hh"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace netrepro {

namespace {

const char* const kForm = " (write MS:MBPS[,MS:MBPS...], e.g. 20000:20,40000:10)";

std::string format_rate(double mbps) {
  char text[64];
  std::snprintf(text, sizeof(text), "%g", mbps);
  return text;
}

uint64_t parse_ms(const std::string& text, const std::string& entry) {
  const bool digits = !text.empty() && text.size() <= 10 &&
                      text.find_first_not_of("0123456789") == std::string::npos;
  const unsigned long long ms = digits ? std::strtoull(text.c_str(), nullptr, 10) : 0;
  if (!digits || ms == 0 || ms > RateSteps::kMaxMs) {
    throw RateStepsError("time '" + text + "' in '" + entry +
                         "' is not a whole number of ms in 1.." +
                         std::to_string(RateSteps::kMaxMs));
  }
  return ms;
}

double parse_rate(const std::string& text, const std::string& entry, double max_rate_mbps) {
  const bool plain = !text.empty() && text.find_first_not_of("0123456789.eE+-") == std::string::npos;
  char* end = nullptr;
  const double rate = plain ? std::strtod(text.c_str(), &end) : 0.0;
  if (!plain || end == nullptr || *end != '\0' || !std::isfinite(rate) || !(rate > 0) ||
      rate > max_rate_mbps) {
    throw RateStepsError("rate '" + text + "' in '" + entry + "' is not a rate in Mbit/s above 0 "
                         "and at most " + format_rate(max_rate_mbps));
  }
  return rate;
}

}  // namespace

RateSteps RateSteps::parse(const std::string& text, double max_rate_mbps) {
  RateSteps out;
  size_t start = 0;
  while (true) {
    const size_t comma = text.find(',', start);
    const std::string entry =
        text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    if (entry.empty()) throw RateStepsError("an empty entry in '" + text + "'" + kForm);
    const size_t colon = entry.find(':');
    if (colon == std::string::npos) throw RateStepsError("'" + entry + "' is not MS:MBPS" + kForm);
    RateStep step;
    step.at_ms = parse_ms(entry.substr(0, colon), entry);
    step.rate_mbps = parse_rate(entry.substr(colon + 1), entry, max_rate_mbps);
    if (!out.steps_.empty() && step.at_ms <= out.steps_.back().at_ms) {
      throw RateStepsError("step '" + entry + "' is not after the one before it: times must "
                           "increase");
    }
    out.steps_.push_back(step);
    if (out.steps_.size() > kMaxSteps) {
      throw RateStepsError("more than " + std::to_string(kMaxSteps) + " steps");
    }
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

void RateSteps::check_within(uint64_t span_ms) const {
  for (const RateStep& s : steps_) {
    if (s.at_ms >= span_ms) {
      throw RateStepsError("the step at " + std::to_string(s.at_ms) + " ms is not before the end "
                           "of service (--span-ms " + std::to_string(span_ms) + ")");
    }
  }
}

std::optional<double> RateSteps::max_rate_mbps() const {
  if (steps_.empty()) return std::nullopt;
  double best = 0;
  for (const RateStep& s : steps_) best = std::max(best, s.rate_mbps);
  return best;
}

std::string RateSteps::describe() const {
  std::string out;
  for (const RateStep& s : steps_) {
    if (!out.empty()) out += ", ";
    out += std::to_string(s.at_ms) + " ms: " + format_rate(s.rate_mbps) + " Mbit/s";
  }
  return out;
}

}  // namespace netrepro
