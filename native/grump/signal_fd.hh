// SIGINT and SIGTERM as a readable descriptor, so the event loops can poll for
// "stop" next to their socket. Blocks both signals for the process while it
// exists and restores the previous mask afterwards.
#pragma once

#include <signal.h>

#include "file_descriptor.hh"

namespace netrepro::grump {

class SignalFd {
 public:
  SignalFd();
  ~SignalFd();
  SignalFd(const SignalFd&) = delete;
  SignalFd& operator=(const SignalFd&) = delete;

  int fd() const { return fd_.fd(); }
  // Reads one pending signal (call when fd() is readable); returns its number.
  int read_signal();

 private:
  sigset_t previous_mask_{};
  FileDescriptor fd_;
};

}  // namespace netrepro::grump
