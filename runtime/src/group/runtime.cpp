// What both runtimes share (see runtime.hpp).
#include "group/runtime.hpp"

#include <exception>
#include <iostream>

namespace spindle::group {

void run_job(const Executor::Job& job) noexcept {
  try {
    job();
  } catch (const std::exception& e) {
    std::cerr << "spindle: a listener threw: " << e.what() << '\n';
  } catch (...) {
    std::cerr << "spindle: a listener threw a non-standard exception\n";
  }
}

}  // namespace spindle::group
