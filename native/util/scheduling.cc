#include "scheduling.hh"

#include <sched.h>

#include <cerrno>
#include <cstring>

namespace netrepro {

std::string request_realtime(int priority) {
  sched_param param{};
  param.sched_priority = priority;
  // pid 0 is the calling thread only: the log writer threads keep the normal policy.
  if (::sched_setscheduler(0, SCHED_FIFO, &param) != 0) {
    return std::string("SCHED_OTHER (SCHED_FIFO refused: ") + std::strerror(errno) + ")";
  }
  return "SCHED_FIFO priority " + std::to_string(priority);
}

}  // namespace netrepro
