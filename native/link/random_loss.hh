// Random loss of one direction: each packet that leaves the queue is lost with probability p,
// independently (Bernoulli), as mahimahi's mm-loss drops packets outside mm-link: after the
// queue, so the queue and its log still show every packet the link served. The draws come from
// a seeded generator whose sequence is fixed by the C++ standard (std::mt19937_64) and compared
// as integers, so a seed gives the same losses on every machine and compiler.
#pragma once

#include <cstdint>
#include <random>
#include <stdexcept>
#include <string>

#include "packet.hh"

namespace netrepro {

// Which packet random loss took, beside the queue's drops: the per-packet queue log's view.
class LossObserver {
 public:
  virtual ~LossObserver() = default;
  // `packet` left the queue at its scheduled departure_us (what the queue saw is in it) and
  // was lost after it.
  virtual void lost(const Packet& packet) = 0;
};

// A probability outside [0, 1) or a malformed one; the message names the value.
class RandomLossError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

class RandomLoss {
 public:
  // Each direction draws from its own stream of the one seed.
  enum class Stream : uint64_t { A2B = 1, B2A = 2 };

  // No loss (p = 0): lose() never draws.
  RandomLoss() = default;
  // Throws RandomLossError unless 0 <= probability < 1.
  RandomLoss(double probability, uint64_t seed, Stream stream);

  // Parses a probability written as a decimal number, 0 <= p < 1; throws RandomLossError.
  static double parse_probability(const std::string& text);

  // Draws for one packet: true when it is lost.
  bool lose();
  // Counts a lost packet of `bytes` (the caller decides which packets it draws for).
  void count(uint64_t bytes) {
    ++lost_;
    lost_bytes_ += bytes;
  }

  bool active() const { return threshold_ != 0; }
  double probability() const { return probability_; }
  uint64_t seed() const { return seed_; }
  uint64_t draws() const { return draws_; }
  uint64_t lost() const { return lost_; }
  uint64_t lost_bytes() const { return lost_bytes_; }

 private:
  double probability_ = 0;
  uint64_t seed_ = 0;
  // A draw below this loses the packet: p x 2^64, so p = 0 never loses.
  uint64_t threshold_ = 0;
  std::mt19937_64 generator_;
  uint64_t draws_ = 0, lost_ = 0, lost_bytes_ = 0;
};

}  // namespace netrepro
