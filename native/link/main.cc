// netrepro-link: a trace-driven link emulator bridging two interfaces (see link_emulator.hh).
// Exit status: 0 after SIGTERM/SIGINT, 1 on a runtime error, 2 on a bad command line or trace.
#include <signal.h>

#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "link_emulator.hh"
#include "options.hh"
#include "queue_spec.hh"
#include "system_error.hh"
#include "trace.hh"

using namespace netrepro;

namespace {

volatile sig_atomic_t stop_requested = 0;

void on_signal(int) { stop_requested = 1; }

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
    options = Options::parse(std::vector<std::string>(argv, argv + argc));
    a2b = plan_direction("a2b", options.a2b);
    b2a = plan_direction("b2a", options.b2a);
  } catch (const UsageError& e) {
    std::cerr << program << ": " << e.what() << "\n" << Options::usage(program);
    return 2;
  } catch (const TraceError& e) {
    std::cerr << program << ": bad trace: " << e.what() << "\n";
    return 2;
  }

  // Signals only arrive while the loop waits in ppoll, so no work is ever interrupted.
  sigset_t blocked, wait_mask;
  sigemptyset(&blocked);
  sigaddset(&blocked, SIGTERM);
  sigaddset(&blocked, SIGINT);
  sigprocmask(SIG_BLOCK, &blocked, &wait_mask);
  sigdelset(&wait_mask, SIGTERM);
  sigdelset(&wait_mask, SIGINT);
  struct sigaction action {};
  action.sa_handler = on_signal;
  sigemptyset(&action.sa_mask);
  sigaction(SIGTERM, &action, nullptr);
  sigaction(SIGINT, &action, nullptr);

  try {
    LinkEmulator emulator(options, std::move(a2b), std::move(b2a));
    emulator.run(&stop_requested, &wait_mask);
  } catch (const SystemError& e) {
    std::cerr << program << ": " << e.what() << " (errno " << e.error_number() << ")\n";
    return 1;
  } catch (const std::exception& e) {
    std::cerr << program << ": " << e.what() << "\n";
    return 1;
  }
  return 0;
}
