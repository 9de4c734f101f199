#include "signal_watch.hh"

#include <sys/signalfd.h>
#include <unistd.h>

#include <cerrno>

#include "system_error.hh"

namespace netrepro::sprout {

namespace {
sigset_t watched() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  return set;
}

// Blocks the signals first so none is lost between here and signalfd().
int block_and_open(sigset_t* old_mask) {
  const sigset_t set = watched();
  check_syscall("sigprocmask(SIG_BLOCK)", ::sigprocmask(SIG_BLOCK, &set, old_mask));
  return ::signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
}
}  // namespace

SignalWatch::SignalWatch() : fd_(check_syscall("signalfd", block_and_open(&old_mask_))) {}

SignalWatch::~SignalWatch() { ::sigprocmask(SIG_SETMASK, &old_mask_, nullptr); }

bool SignalWatch::triggered() {
  signalfd_siginfo info{};
  while (true) {
    const ssize_t n = ::read(fd_.fd(), &info, sizeof(info));
    if (n == static_cast<ssize_t>(sizeof(info))) {
      triggered_ = true;
      continue;
    }
    if (n < 0 && errno == EINTR) {
      continue;
    }
    if (n < 0 && errno != EAGAIN) {
      throw SystemError("read signalfd", errno);
    }
    break;
  }
  return triggered_;
}

}  // namespace netrepro::sprout
