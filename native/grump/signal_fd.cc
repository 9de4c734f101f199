#include "signal_fd.hh"

#include <sys/signalfd.h>
#include <unistd.h>

#include <stdexcept>

#include "system_error.hh"

namespace netrepro::grump {

namespace {
sigset_t stop_signals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  return set;
}

// Blocks the stop signals (so they queue for the signalfd) and returns the old mask.
sigset_t block_stop_signals() {
  const sigset_t set = stop_signals();
  sigset_t previous;
  const int rc = ::pthread_sigmask(SIG_BLOCK, &set, &previous);
  if (rc != 0) {
    throw netrepro::SystemError("pthread_sigmask(SIG_BLOCK, SIGINT|SIGTERM)", rc);
  }
  return previous;
}
}  // namespace

SignalFd::SignalFd()
    : previous_mask_(block_stop_signals()),
      fd_([] {
        const sigset_t set = stop_signals();
        return check_syscall("signalfd(SIGINT|SIGTERM)", ::signalfd(-1, &set, SFD_CLOEXEC));
      }()) {}

SignalFd::~SignalFd() { ::pthread_sigmask(SIG_SETMASK, &previous_mask_, nullptr); }

int SignalFd::read_signal() {
  signalfd_siginfo info{};
  const ssize_t n = check_syscall("read(signalfd)", ::read(fd_.fd(), &info, sizeof(info)));
  if (static_cast<size_t>(n) != sizeof(info)) {
    throw std::runtime_error("read(signalfd): short read of " + std::to_string(n) + " bytes");
  }
  return static_cast<int>(info.ssi_signo);
}

}  // namespace netrepro::grump
