// The parameters a controller runs with. The registry fills them from the
// command line (--window N, --param NAME=VALUE) and the defaults declared in
// controllers.tsv, after checking each against its declared range.
#pragma once

#include <map>
#include <optional>
#include <string>

namespace netrepro::grump {

// One declared parameter of a controller (a `param` row of controllers.tsv).
struct ParamSpec {
  std::string name;
  bool integer = false;
  double minimum = 0;
  double maximum = 0;
  std::optional<double> default_value;  // none: the parameter must be given
};

struct ControllerOptions {
  std::map<std::string, double> values;  // by parameter name
  bool debug = false;                    // --debug: the controller may trace to stderr

  // The value of `name`, else `fallback` (a controller built without the registry).
  double get(const std::string& name, double fallback) const;
  ControllerOptions& set(const std::string& name, double value);
};

}  // namespace netrepro::grump
