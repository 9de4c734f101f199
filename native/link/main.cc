// netrepro-link: a trace-driven link emulator bridging two interfaces (see link_emulator.hh).
// Exit status: 0 after SIGTERM/SIGINT, 1 on a runtime error, 2 on a bad command line or trace.
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "link_emulator.hh"
#include "options.hh"
#include "queue_spec.hh"
#include "signal_fd.hh"
#include "system_error.hh"
#include "trace.hh"

using namespace netrepro;

namespace {

DirectionPlan plan_direction(const std::string& name, const DirectionOptions& d) {
  DirectionPlan plan;
  plan.name = name;
  plan.options = d;
  if (d.trace) plan.trace = std::make_unique<Trace>(Trace::load(*d.trace));
  try {
    plan.queue = QueueSpec::parse(d.queue);
  } catch (const QueueSpecError& e) {
    throw UsageError("--" + name + "-queue: " + e.what());
  }
  plan.order = parse_stage_order(d.order);
  return plan;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string program = argc > 0 ? argv[0] : "netrepro-link";
  Options options;
  DirectionPlan a2b, b2a;
  try {
    bool help = false;
    options = Options::parse(std::vector<std::string>(argv, argv + argc), &help);
    if (help) {
      std::cout << Options::usage(program);
      return 0;
    }
    a2b = plan_direction("a2b", options.a2b);
    b2a = plan_direction("b2a", options.b2a);
  } catch (const UsageError& e) {
    std::cerr << program << ": " << e.what() << "\n" << Options::usage(program);
    return 2;
  } catch (const TraceError& e) {
    std::cerr << program << ": bad trace: " << e.what() << "\n";
    return 2;
  }

  try {
    // SIGTERM/SIGINT become a descriptor the loop polls: no work is ever interrupted.
    SignalFd stop;
    LinkEmulator emulator(options, std::move(a2b), std::move(b2a));
    emulator.run(stop);
  } catch (const SystemError& e) {
    std::cerr << program << ": " << e.what() << " (errno " << e.error_number() << ")\n";
    return 1;
  } catch (const std::exception& e) {
    std::cerr << program << ": " << e.what() << "\n";
    return 1;
  }
  return 0;
}
