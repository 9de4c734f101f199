#include "fixed_window_controller.hh"

namespace netrepro::grump {

FixedWindowController::FixedWindowController(const ControllerOptions& options)
    : window_(options.window_or(kDefaultWindow)) {}

std::map<std::string, double> FixedWindowController::parameters() const {
  return {{"window", window_}, {"timeout_ms", kTimeoutMs}};
}

}  // namespace netrepro::grump
