// SIGINT/SIGTERM as a pollable descriptor (signalfd), so the event loops
// stop cleanly and still write their stats.
#pragma once

#include <signal.h>

#include "file_descriptor.hh"

namespace netrepro::sprout {

class SignalWatch {
 public:
  // Blocks SIGINT and SIGTERM for this (single-threaded) process and opens a
  // signalfd for them; the old mask comes back on destruction.
  SignalWatch();
  ~SignalWatch();
  SignalWatch(const SignalWatch&) = delete;
  SignalWatch& operator=(const SignalWatch&) = delete;

  int fd() const { return fd_.fd(); }
  // True once a watched signal has arrived (reads it without blocking).
  bool triggered();

 private:
  sigset_t old_mask_{};
  FileDescriptor fd_;
  bool triggered_ = false;
};

}  // namespace netrepro::sprout
