// A submitted controller (class ::Controller of the student's controller.hh,
// found through -iquote) as a netrepro::grump::Controller named "student",
// linked into grump-sender's main (libgrump_sender_main.a). Built by
// app/contest's build step with -DNETREPRO_STUDENT_API=1|2|3, the API
// generation the submission's header was checked to follow:
//   1 keithw/datagrump 2013: packet_was_sent(seq, send_ts)
//   2 keithw/sourdough before after_timeout: datagram_was_sent(seq, send_ts)
//   3 keithw/sourdough today: datagram_was_sent(seq, send_ts, after_timeout)
// Timestamps are converted to the generation's clock (compat_clock.hh). A
// window above kWindowCap is capped (and counted): the contest scores a flood
// as the link delivers it, without letting one controller exhaust the machine.
#include <algorithm>
#include <cstdint>
#include <map>
#include <memory>
#include <string>

#include "compat_clock.hh"
#include "controller.hh"  // the submission's
#include "grump/controller_registry.hh"

namespace netrepro::grump::student {
namespace {

constexpr unsigned int kWindowCap = 10000;  // datagrams; docs/contest.md

class SubmittedController : public grump::Controller {
 public:
  explicit SubmittedController(const ControllerOptions& options)
      : epoch_(epoch_unix_ms()), submitted_(options.debug) {}

  unsigned int window_size() override {
    const unsigned int window = submitted_.window_size();
    if (window > kWindowCap) {
      ++windows_above_cap_;
      max_window_asked_ = std::max(max_window_asked_, window);
      return kWindowCap;
    }
    return window;
  }

  void datagram_was_sent(uint64_t sequence_number, uint64_t send_timestamp,
                         bool after_timeout) override {
#if NETREPRO_STUDENT_API == 1
    (void)after_timeout;
    submitted_.packet_was_sent(sequence_number, to_api_ms(send_timestamp));
#elif NETREPRO_STUDENT_API == 2
    (void)after_timeout;
    submitted_.datagram_was_sent(sequence_number, to_api_ms(send_timestamp));
#else
    submitted_.datagram_was_sent(sequence_number, to_api_ms(send_timestamp), after_timeout);
#endif
  }

  void ack_received(uint64_t sequence_number_acked, uint64_t send_timestamp_acked,
                    uint64_t recv_timestamp_acked, uint64_t timestamp_ack_received) override {
    submitted_.ack_received(sequence_number_acked, to_api_ms(send_timestamp_acked),
                            to_api_ms(recv_timestamp_acked), to_api_ms(timestamp_ack_received));
  }

  unsigned int timeout_ms() override { return submitted_.timeout_ms(); }

  std::map<std::string, double> parameters() const override {
    return {{"api_generation", kApi},
            {"window_cap", kWindowCap},
            {"windows_above_cap", static_cast<double>(windows_above_cap_)},
            {"max_window_asked", max_window_asked_},
            {"clock_epoch_unix_ms", static_cast<double>(epoch_)}};
  }

 private:
  uint64_t epoch_;  // fixed before the submission's constructor can read the clock
  ::Controller submitted_;
  uint64_t windows_above_cap_ = 0;
  unsigned int max_window_asked_ = 0;
};

const LinkedController kRegistered{
    "student", [](const ControllerOptions& options) -> std::unique_ptr<grump::Controller> {
      return std::make_unique<SubmittedController>(options);
    }};

}  // namespace
}  // namespace netrepro::grump::student
