#include "poll_loop.hh"

#include <time.h>

#include <cerrno>

#include "system_error.hh"

namespace netrepro {

void PollLoop::add(int fd, short events, Callback callback) {
  fds_.push_back(pollfd{fd, events, 0});
  callbacks_.push_back(std::move(callback));
}

void PollLoop::set_events(int fd, short events) {
  for (pollfd& p : fds_) {
    if (p.fd == fd) p.events = events;
  }
}

int PollLoop::poll_us(std::optional<uint64_t> timeout_us) {
  for (pollfd& p : fds_) {
    p.revents = 0;
  }
  timespec timeout{};
  if (timeout_us) {
    timeout.tv_sec = static_cast<time_t>(*timeout_us / 1000000u);
    timeout.tv_nsec = static_cast<long>((*timeout_us % 1000000u) * 1000u);
  }
  const int n = ::ppoll(fds_.data(), fds_.size(), timeout_us ? &timeout : nullptr, nullptr);
  if (n < 0) {
    if (errno == EINTR) {
      return 0;
    }
    throw SystemError("poll on " + what_, errno);
  }
  return n;
}

PollLoop::Outcome PollLoop::dispatch() {
  Outcome outcome;
  for (size_t i = 0; i < fds_.size(); ++i) {
    if (fds_[i].revents == 0) continue;
    ++outcome.ready;
    const short revents = fds_[i].revents;
    fds_[i].revents = 0;  // a second dispatch() runs nothing
    if (callbacks_[i](revents) == Next::Stop) {
      outcome.stopped = true;
      break;  // the descriptors after it wait for the next round (if any)
    }
  }
  return outcome;
}

PollLoop::Outcome PollLoop::wait_us(std::optional<uint64_t> timeout_us) {
  poll_us(timeout_us);
  return dispatch();
}

PollLoop::Outcome PollLoop::wait_ms(int timeout_ms) {
  if (timeout_ms < 0) {
    return wait_us(std::nullopt);
  }
  return wait_us(static_cast<uint64_t>(timeout_ms) * 1000u);
}

}  // namespace netrepro
