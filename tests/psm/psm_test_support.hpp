// What the psm tests (and the simulator's records test) share: waiting, bounded, for
// something to hold, closing what a test may have closed already, and reading the built-in
// topics.
//
// Threading: test threads only.
#pragma once

#include <chrono>
#include <iterator>
#include <string>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>
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

// The built-in reader of `topic` ("DCPSParticipant", ...) of `dp`'s built-in subscriber.
template <class T>
dds::sub::DataReader<T> builtin_reader(const dds::domain::DomainParticipant& dp,
                                       const std::string& topic) {
  std::vector<dds::sub::DataReader<T>> found;
  dds::sub::find<dds::sub::DataReader<T>>(dds::sub::builtin_subscriber(dp), topic,
                                          std::back_inserter(found));
  REQUIRE(found.size() == 1);
  return found.front();
}

// The alive samples of `r` for which `pred` holds (read, not taken).
template <class T, class Pred>
std::vector<T> alive(dds::sub::DataReader<T>& r, Pred pred) {
  std::vector<T> out;
  for (const auto& s : r.read()) {
    if (s.info().valid() &&
        s.info().state().instance_state() == dds::sub::status::InstanceState::alive() &&
        pred(s.data()))
      out.push_back(s.data());
  }
  return out;
}

}  // namespace psm_test
