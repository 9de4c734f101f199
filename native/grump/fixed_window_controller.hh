// Warm-up A of the contest: a constant window (sourdough's default Controller
// with the window made an option).
#pragma once

#include "controller.hh"
#include "controller_options.hh"

namespace netrepro::grump {

class FixedWindowController : public Controller {
 public:
  static constexpr unsigned int kDefaultWindow = 50;  // sourdough's default controller
  static constexpr unsigned int kTimeoutMs = 1000;

  explicit FixedWindowController(const ControllerOptions& options);

  unsigned int window_size() override { return window_; }
  void datagram_was_sent(uint64_t, uint64_t, bool) override {}
  void ack_received(uint64_t, uint64_t, uint64_t, uint64_t) override {}
  unsigned int timeout_ms() override { return timeout_ms_; }
  std::map<std::string, double> parameters() const override;

 private:
  unsigned int window_;
  unsigned int timeout_ms_;
};

}  // namespace netrepro::grump
