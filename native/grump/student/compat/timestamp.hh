// The clock a submitted controller may call, in every API generation the
// contest accepts (docs/contest.md). Written for netrepro; it declares the
// same functions as the public frameworks' timestamp.hh:
//  - keithw/datagrump (2013): Network::timestamp(), ms since the 6.829 epoch
//    (Unix ms - 1362700000000);
//  - keithw/sourdough: timestamp_ms(), ms since the program started.
// The timestamps the sender passes to the controller are on the same clock as
// the functions of its generation, so `timestamp_ms() - send_timestamp` is the
// time since that send.
#ifndef TIMESTAMP_HH
#define TIMESTAMP_HH

#include <cstdint>
#include <ctime>

namespace Network {
uint64_t timestamp(void);
uint64_t timestamp(const struct timespec& ts);
}  // namespace Network

uint64_t timestamp_ms();
uint64_t timestamp_ms(const timespec& ts);

#endif /* TIMESTAMP_HH */
