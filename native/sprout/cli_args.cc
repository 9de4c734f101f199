#include "cli_args.hh"

#include <cmath>
#include <cstdlib>

namespace netrepro::sprout {

std::string CliArgs::next_flag() { return argv_[index_++]; }

std::string CliArgs::value(const std::string& flag) {
  if (index_ >= argc_) {
    throw UsageError(flag + " needs a value");
  }
  return argv_[index_++];
}

uint16_t CliArgs::parse_port(const std::string& flag, const std::string& text) {
  char* end = nullptr;
  const long port = std::strtol(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || port < 1 || port > 65535) {
    throw UsageError(flag + " '" + text + "' is not a port number in 1..65535");
  }
  return static_cast<uint16_t>(port);
}

double CliArgs::parse_double(const std::string& flag, const std::string& text, double lo,
                             double hi) {
  char* end = nullptr;
  const double x = std::strtod(text.c_str(), &end);
  if (text.empty() || *end != '\0' || !std::isfinite(x) || !(x > lo) || !(x < hi)) {
    throw UsageError(flag + " '" + text + "' must be a number in (" + std::to_string(lo) +
                     ", " + (std::isinf(hi) ? std::string("inf") : std::to_string(hi)) + ")");
  }
  return x;
}

}  // namespace netrepro::sprout
