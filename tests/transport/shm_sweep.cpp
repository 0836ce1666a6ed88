// shm_sweep: unlinks the named shared-memory segments that versions up to 2 left in /dev/shm
// whose owner process is gone, under every prefix (ShmTransport::reclaim_all_stale). This
// version names none (its segments are memfds); the test suite still runs it after its tests
// (tools/test.sh), for what an earlier build left on the machine.
#include <iostream>

#include <spindle/transport/shm.hpp>

int main() {
  const auto n = spindle::transport::ShmTransport::reclaim_all_stale();
  std::cout << "shm_sweep: " << n << " stale segment(s) unlinked" << std::endl;
  return 0;
}
