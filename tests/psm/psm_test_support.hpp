// What the psm tests share: waiting, bounded, for something to hold, and closing what a
// test may have closed already.
//
// Threading: test threads only.
#pragma once

#include <chrono>
#include <thread>

#include <dds/dds.hpp>

namespace psm_test {

// Polls `done` until it holds (true) or `limit` passes (false).
template <class Pred>
bool eventually(Pred done, std::chrono::milliseconds limit = std::chrono::seconds(10)) {
  const auto until = std::chrono::steady_clock::now() + limit;
  while (!done()) {
    if (std::chrono::steady_clock::now() > until) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return true;
}

// Closes `e` unless the test closed it (a second close() throws AlreadyClosedError).
inline void close_quietly(dds::core::Entity e) {
  try {
    e.close();
  } catch (const dds::core::AlreadyClosedError&) {
    // the test closed it
  }
}

}  // namespace psm_test
