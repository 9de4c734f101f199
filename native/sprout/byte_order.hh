// Big-endian field access for the wire formats.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace netrepro::sprout {

template <typename T>
void put_be(std::string& out, T value) {
  for (int shift = 8 * (static_cast<int>(sizeof(T)) - 1); shift >= 0; shift -= 8) {
    out.push_back(static_cast<char>((static_cast<uint64_t>(value) >> shift) & 0xff));
  }
}

template <typename T>
T get_be(const std::string& in, size_t offset) {
  uint64_t value = 0;
  for (size_t i = 0; i < sizeof(T); ++i) {
    value = (value << 8) | static_cast<unsigned char>(in[offset + i]);
  }
  return static_cast<T>(value);
}

}  // namespace netrepro::sprout
