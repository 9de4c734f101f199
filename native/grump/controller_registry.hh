// Controllers by name. The shipped ones are listed once, in controllers.tsv,
// from which CMake generates the add() calls; a controller linked in from
// outside this folder (a submitted one) registers itself with a static
// LinkedController object.
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

  // Every controller of controllers.tsv, plus those linked in (LinkedController).
  static ControllerRegistry with_builtin_controllers();

  void add(const std::string& name, Factory factory, std::vector<ParamSpec> params = {});
  // Throws UnknownController naming the known controllers, and std::invalid_argument for
  // a parameter the controller does not take, out of its range, or missing.
  std::unique_ptr<Controller> create(const std::string& name,
                                     const ControllerOptions& options) const;
  // The options checked and completed with the declared defaults.
  ControllerOptions resolve(const std::string& name, const ControllerOptions& options) const;
  const std::vector<ParamSpec>& params(const std::string& name) const;
  std::vector<std::string> names() const;  // sorted
  std::string names_joined() const;        // "a, b, c"

 private:
  struct Entry {
    Factory factory;
    std::vector<ParamSpec> params;
  };
  const Entry& entry(const std::string& name) const;

  std::map<std::string, Entry> entries_;
};

// A static object of this type registers a controller in every registry that
// with_builtin_controllers() makes from then on.
class LinkedController {
 public:
  LinkedController(const std::string& name, ControllerRegistry::Factory factory);
};

}  // namespace netrepro::grump
