#include "normal_cdf.hh"

#include <cmath>
#include <stdexcept>
#include <string>

namespace netrepro::sprout {

namespace {
constexpr double kCellWidth = 2000.0 / 32768.0;  // exact in binary
}

NormalCdf::NormalCdf(Mode mode) : mode_(mode) {}

void NormalCdf::set_stddev(double stddev) {
  if (!(stddev > 0)) {
    throw std::invalid_argument("NormalCdf: stddev must be > 0, got " + std::to_string(stddev));
  }
  if (stddev == stddev_) {
    return;
  }
  stddev_ = stddev;
  if (mode_ != Mode::kReferenceTable) {
    return;
  }
  table_.assign(kCells + 1, 0.0);
  for (int cell = 0; cell <= kCells; ++cell) {
    // The reference's first cell stands for its lower edge, the others for their midpoints.
    const double x = cell == 0 ? -kHalfRange : (cell + 0.5) * kCellWidth - kHalfRange;
    table_[cell] = exact(x);
  }
}

double NormalCdf::exact(double x) const { return 0.5 * std::erfc(-x / (stddev_ * M_SQRT2)); }

double NormalCdf::operator()(double x) const {
  if (stddev_ <= 0) {
    throw std::logic_error("NormalCdf: set_stddev() was never called");
  }
  if (mode_ == Mode::kExact) {
    return exact(x);
  }
  // Truncation toward zero then clamping, exactly as the reference's lookup.
  const double position = (x + kHalfRange) / kCellWidth;
  int cell;
  if (position <= -1.0) {
    cell = 0;
  } else if (position >= kCells) {
    cell = kCells;
  } else {
    cell = static_cast<int>(position);
  }
  return table_[cell];
}

}  // namespace netrepro::sprout
