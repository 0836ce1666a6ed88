// smc_delivery_check GROUP.yaml LOG... : runs the delivery-log checker over logs written by
// smc_node (or any process using write_log) and prints every violation. Exit 0 when the
// logs prove identical order, per-sender FIFO, no gap, no duplicate and no null delivered;
// 1 on a violation; 2 on unreadable input. --partial accepts runs that did not complete.
#include <iostream>
#include <string>
#include <vector>

#include "delivery_log.hpp"
#include "group/view.hpp"
#include "test_node.hpp"

int main(int argc, char** argv) {
  bool complete = true;
  std::vector<std::string> files;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--partial") {
      complete = false;
    } else {
      files.push_back(a);
    }
  }
  if (files.size() < 2) {
    std::cerr << "usage: smc_delivery_check [--partial] GROUP.yaml LOG...\n";
    return 2;
  }
  try {
    const auto g = spindle::group::load_group(files[0]);
    std::vector<spindle::testing::NodeLog> logs;
    std::size_t delivered = 0;
    for (std::size_t i = 1; i < files.size(); ++i) {
      logs.push_back(spindle::testing::read_log(files[i]));
      delivered += logs.back().delivered.size();
    }
    const auto errors = spindle::testing::check(spindle::testing::specs_of(g), logs, complete);
    for (const auto& e : errors)
      std::cout << "violation: " << e << '\n';
    std::cout << (errors.empty() ? "ok" : "FAILED") << ": " << logs.size() << " logs, " << delivered
              << " deliveries\n";
    return errors.empty() ? 0 : 1;
  } catch (const std::exception& e) {
    std::cerr << "smc_delivery_check: " << e.what() << '\n';
    return 2;
  }
}
