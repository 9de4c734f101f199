// Controllers by name. Adding one is a class plus one add() line in
// controller_registry.cc.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "controller.hh"
#include "controller_options.hh"

namespace netrepro::grump {

class UnknownController : public std::out_of_range {
 public:
  using std::out_of_range::out_of_range;
};

class ControllerRegistry {
 public:
  using Factory = std::function<std::unique_ptr<Controller>(const ControllerOptions&)>;

  // Every controller shipped in this folder.
  static ControllerRegistry with_builtin_controllers();

  void add(const std::string& name, Factory factory);
  // Throws UnknownController naming the known controllers.
  std::unique_ptr<Controller> create(const std::string& name,
                                     const ControllerOptions& options) const;
  std::vector<std::string> names() const;  // sorted
  std::string names_joined() const;        // "a, b, c"

 private:
  std::map<std::string, Factory> factories_;
};

}  // namespace netrepro::grump
