// The epoch of a submitted controller's clock (compat/timestamp.hh), shared by
// the clock functions and by the adapter that converts the sender's Unix-ms
// timestamps into it.
#pragma once

#include <cstdint>
#include <ctime>

namespace netrepro::grump::student {

// 1: datagrump 2013 (6.829 epoch), 2: sourdough before after_timeout, 3: sourdough today.
#ifndef NETREPRO_STUDENT_API
#error "build with -DNETREPRO_STUDENT_API=1, 2 or 3 (the API generation of the submission)"
#endif
constexpr int kApi = NETREPRO_STUDENT_API;

constexpr uint64_t kDatagrumpEpochMs = 1362700000000ULL;  // datagrump's "6.829 epoch"

uint64_t unix_ms(const struct timespec& ts);
uint64_t unix_now_ms();
// The Unix ms the generation's clock counts from: datagrump's fixed epoch, or
// sourdough's program start (fixed at the first call, as sourdough's own).
uint64_t epoch_unix_ms();
// A Unix-ms timestamp on the submission's clock.
uint64_t to_api_ms(uint64_t unix_ms);

}  // namespace netrepro::grump::student
