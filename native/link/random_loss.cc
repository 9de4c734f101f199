#include "random_loss.hh"

#include <cmath>
#include <cstdlib>

namespace netrepro {

namespace {

// SplitMix64 (Steele, Lea, Flood 2014): spreads a small seed and the stream's number over all
// 64 bits, so seeds 1 and 2, or the two directions of one seed, start unrelated sequences.
uint64_t splitmix64(uint64_t x) {
  x += 0x9E3779B97F4A7C15ULL;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
  return x ^ (x >> 31);
}

}  // namespace

RandomLoss::RandomLoss(double probability, uint64_t seed, Stream stream)
    : probability_(probability), seed_(seed) {
  if (!(probability >= 0.0 && probability < 1.0)) {
    throw RandomLossError("loss probability " + std::to_string(probability) +
                          " is not in [0, 1)");
  }
  // p < 1, so p x 2^64 < 2^64 fits (ldexp is exact; the cast truncates towards zero).
  threshold_ = static_cast<uint64_t>(std::ldexp(probability, 64));
  if (probability > 0 && threshold_ == 0) threshold_ = 1;  // below 2^-64: still a loss rate
  generator_.seed(splitmix64(seed ^ splitmix64(static_cast<uint64_t>(stream))));
}

double RandomLoss::parse_probability(const std::string& text) {
  const bool plain = !text.empty() && text.find_first_not_of("0123456789.eE+-") == std::string::npos;
  char* end = nullptr;
  const double p = plain ? std::strtod(text.c_str(), &end) : -1.0;
  if (!plain || end == nullptr || *end != '\0' || !std::isfinite(p) || !(p >= 0.0 && p < 1.0)) {
    throw RandomLossError("'" + text + "' is not a loss probability in [0, 1) (0.01 is 1%)");
  }
  return p;
}

bool RandomLoss::lose() {
  if (threshold_ == 0) return false;
  ++draws_;
  return generator_() < threshold_;
}

}  // namespace netrepro
