// Stop signals as a readable, non-blocking descriptor, so an event loop polls for "stop" next
// to its sockets and no signal ever interrupts work. While a SignalFd exists the signals are
// blocked for the calling thread (create it before starting other threads); the previous mask
// comes back when it is destroyed.
#pragma once

#include <signal.h>

#include <initializer_list>
#include <optional>

#include "file_descriptor.hh"

namespace netrepro {

class SignalFd {
 public:
  // SIGINT and SIGTERM unless told otherwise.
  SignalFd();
  explicit SignalFd(std::initializer_list<int> signals);
  ~SignalFd();
  SignalFd(const SignalFd&) = delete;
  SignalFd& operator=(const SignalFd&) = delete;

  int fd() const { return fd_.fd(); }
  // The next pending signal's number, or nothing when none is pending (never blocks).
  std::optional<int> read_signal();
  // Reads every pending signal; true once any has arrived (remembered).
  bool triggered();
  // The last signal read, if any.
  std::optional<int> last_signal() const { return last_; }

 private:
  sigset_t signals_{};
  sigset_t previous_mask_{};
  FileDescriptor fd_;
  std::optional<int> last_;
};

}  // namespace netrepro
