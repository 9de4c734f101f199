#include "fixed_window_controller.hh"

namespace netrepro::grump {

FixedWindowController::FixedWindowController(const ControllerOptions& options)
    : window_(static_cast<unsigned int>(options.get("window", kDefaultWindow))),
      timeout_ms_(static_cast<unsigned int>(options.get("timeout_ms", kTimeoutMs))) {}

std::map<std::string, double> FixedWindowController::parameters() const {
  return {{"window", window_}, {"timeout_ms", timeout_ms_}};
}

}  // namespace netrepro::grump
