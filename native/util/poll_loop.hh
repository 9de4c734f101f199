// The one poll loop: descriptors with a callback each, waited on together with a timeout
// (microsecond precision, via ppoll). Callbacks run in the order their descriptors were added,
// so a program chooses what is served first; one that returns Stop ends the round (the ones
// after it are not run).
#pragma once

#include <poll.h>

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace netrepro {

class PollLoop {
 public:
  enum class Next { Continue, Stop };
  // Gets the revents poll reported (POLLIN, POLLERR, ...).
  using Callback = std::function<Next(short revents)>;

  struct Outcome {
    int ready = 0;         // descriptors whose callbacks ran (0: the timeout passed)
    bool stopped = false;  // a callback returned Stop
  };

  // `what` names the loop in error messages (e.g. "sender socket and signalfd").
  explicit PollLoop(std::string what) : what_(std::move(what)) {}

  // Watches fd for `events` (POLLERR and POLLHUP are always reported).
  void add(int fd, short events, Callback callback);
  // Changes what an added fd is watched for (0: only errors, e.g. while it is not read).
  void set_events(int fd, short events);

  // Waits at most `timeout_us` (nothing: until an event), then runs the callbacks of the
  // descriptors that are ready. EINTR counts as a wait with nothing ready. Throws SystemError.
  Outcome wait_us(std::optional<uint64_t> timeout_us);
  // The same with a timeout in milliseconds (negative: until an event).
  Outcome wait_ms(int timeout_ms);

  // wait_us() in two steps, for a loop that notes the time between them: poll_us() only
  // waits (returns how many descriptors are ready), dispatch() runs their callbacks.
  int poll_us(std::optional<uint64_t> timeout_us);
  Outcome dispatch();

 private:
  std::string what_;
  std::vector<pollfd> fds_;
  std::vector<Callback> callbacks_;
};

}  // namespace netrepro
