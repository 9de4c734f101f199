// Command-line options a controller factory may use.
#pragma once

#include <optional>
#include <string>

namespace netrepro::grump {

struct ControllerOptions {
  std::optional<unsigned int> window;  // --window N

  // The window given, else the controller's default.
  unsigned int window_or(unsigned int fallback) const { return window.value_or(fallback); }
  // For controllers that set their own window: an explicit --window is an error,
  // not something to ignore silently.
  void reject_window(const std::string& controller) const;
};

}  // namespace netrepro::grump
