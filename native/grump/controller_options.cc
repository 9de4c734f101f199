#include "controller_options.hh"

#include <stdexcept>

namespace netrepro::grump {

void ControllerOptions::reject_window(const std::string& controller) const {
  if (window.has_value()) {
    throw std::invalid_argument("controller '" + controller +
                                "' computes its own window and takes no --window; drop --window " +
                                std::to_string(*window));
  }
}

}  // namespace netrepro::grump
