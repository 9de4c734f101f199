#include "scheduling.hh"

#include <pthread.h>
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

std::string pin_to_cpu(int cpu) {
  if (cpu < 0 || cpu >= CPU_SETSIZE) return "cannot pin to CPU " + std::to_string(cpu);
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  const int error = ::pthread_setaffinity_np(::pthread_self(), sizeof(set), &set);
  return error == 0 ? "" : "cannot pin to CPU " + std::to_string(cpu) + ": " +
                               std::strerror(error);
}

}  // namespace netrepro
