#include "controller_options.hh"

namespace netrepro::grump {

double ControllerOptions::get(const std::string& name, double fallback) const {
  const auto it = values.find(name);
  return it == values.end() ? fallback : it->second;
}

ControllerOptions& ControllerOptions::set(const std::string& name, double value) {
  values[name] = value;
  return *this;
}

}  // namespace netrepro::grump
