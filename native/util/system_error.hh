// Errors that carry errno and the call that failed, so a message names both.
#pragma once

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <string>

namespace netrepro {

class SystemError : public std::runtime_error {
 public:
  SystemError(const std::string& context, int err)
      : std::runtime_error(context + ": " + std::strerror(err)), errno_(err) {}
  int error_number() const { return errno_; }

 private:
  int errno_;
};

// Throws SystemError with the current errno when a libc call returned < 0.
template <typename T>
T check_syscall(const std::string& context, T result) {
  if (result < 0) {
    throw SystemError(context, errno);
  }
  return result;
}

}  // namespace netrepro
