// shm_sweep: unlinks the shared-memory segments whose owner process is gone, under every
// prefix (ShmTransport::reclaim_all_stale). The test suite runs it after its tests
// (tools/test.sh): tests that SIGKILL processes leave their segments under per-run
// namespaces, which no later transport reclaims.
#include <iostream>

#include <spindle/transport/shm.hpp>

int main() {
  const auto n = spindle::transport::ShmTransport::reclaim_all_stale();
  std::cout << "shm_sweep: " << n << " stale segment(s) unlinked" << std::endl;
  return 0;
}
