#include "signal_fd.hh"

#include <sys/signalfd.h>
#include <unistd.h>

#include <cerrno>
#include <stdexcept>
#include <string>

#include "system_error.hh"

namespace netrepro {

namespace {
sigset_t make_set(std::initializer_list<int> signals) {
  sigset_t set;
  sigemptyset(&set);
  for (const int s : signals) {
    if (sigaddset(&set, s) != 0) {
      throw std::invalid_argument("SignalFd: " + std::to_string(s) + " is not a signal number");
    }
  }
  return set;
}

// Blocks the signals first (so they queue for the descriptor, none lost between the two
// calls) and returns the old mask through `previous`.
int block_and_open(const sigset_t& set, sigset_t* previous) {
  const int rc = ::pthread_sigmask(SIG_BLOCK, &set, previous);
  if (rc != 0) {
    throw SystemError("pthread_sigmask(SIG_BLOCK)", rc);
  }
  const int fd = ::signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
  if (fd < 0) {
    const int err = errno;
    ::pthread_sigmask(SIG_SETMASK, previous, nullptr);
    throw SystemError("signalfd", err);
  }
  return fd;
}
}  // namespace

SignalFd::SignalFd() : SignalFd({SIGINT, SIGTERM}) {}

SignalFd::SignalFd(std::initializer_list<int> signals)
    : signals_(make_set(signals)), fd_(block_and_open(signals_, &previous_mask_)) {}

SignalFd::~SignalFd() { ::pthread_sigmask(SIG_SETMASK, &previous_mask_, nullptr); }

std::optional<int> SignalFd::read_signal() {
  signalfd_siginfo info{};
  while (true) {
    const ssize_t n = ::read(fd_.fd(), &info, sizeof(info));
    if (n == static_cast<ssize_t>(sizeof(info))) {
      last_ = static_cast<int>(info.ssi_signo);
      return last_;
    }
    if (n < 0 && errno == EINTR) {
      continue;
    }
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      return std::nullopt;
    }
    if (n < 0) {
      throw SystemError("read(signalfd)", errno);
    }
    throw std::runtime_error("read(signalfd): short read of " + std::to_string(n) + " bytes");
  }
}

bool SignalFd::triggered() {
  while (read_signal()) {
  }
  return last_.has_value();
}

}  // namespace netrepro
