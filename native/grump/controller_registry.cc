#include "controller_registry.hh"

#include "aimd_controller.hh"
#include "dasjoshma_controller.hh"
#include "delay_trigger_controller.hh"
#include "fixed_window_controller.hh"
#include "johnnybameesh_controller.hh"
#include "sheen_controller.hh"

namespace netrepro::grump {

namespace {
template <typename T>
std::unique_ptr<Controller> make(const ControllerOptions& options) {
  return std::make_unique<T>(options);
}
}  // namespace

ControllerRegistry ControllerRegistry::with_builtin_controllers() {
  ControllerRegistry registry;
  registry.add("fixed-window", make<FixedWindowController>);
  registry.add("aimd", make<AimdController>);
  registry.add("delay-trigger", make<DelayTriggerController>);
  registry.add("dasjoshma", make<DasJoshmaController>);
  registry.add("johnnybameesh", make<JohnnybAmeeshController>);
  registry.add("sheen", make<SheenController>);
  return registry;
}

void ControllerRegistry::add(const std::string& name, Factory factory) {
  if (!factories_.emplace(name, std::move(factory)).second) {
    throw std::logic_error("controller '" + name + "' registered twice");
  }
}

std::unique_ptr<Controller> ControllerRegistry::create(const std::string& name,
                                                       const ControllerOptions& options) const {
  const auto it = factories_.find(name);
  if (it == factories_.end()) {
    throw UnknownController("unknown controller '" + name + "'; known controllers: " +
                            names_joined());
  }
  return it->second(options);
}

std::vector<std::string> ControllerRegistry::names() const {
  std::vector<std::string> out;
  for (const auto& entry : factories_) {
    out.push_back(entry.first);
  }
  return out;
}

std::string ControllerRegistry::names_joined() const {
  std::string out;
  for (const auto& name : names()) {
    out += (out.empty() ? "" : ", ") + name;
  }
  return out;
}

}  // namespace netrepro::grump
