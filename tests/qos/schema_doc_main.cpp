// qos_schema_doc qos|domain: prints the QoS profile or domain file schema document, the
// way qos-profiles/schema.md and docs/domain-schema.md are made.
#include <iostream>
#include <string_view>

#include "config/domain_config.hpp"
#include "qos/schema.hpp"

int main(int argc, char** argv) {
  const std::string_view which = argc > 1 ? argv[1] : "";
  if (which == "qos") {
    std::cout << spindle::qos::schema_markdown();
  } else if (which == "domain") {
    std::cout << spindle::config::schema_markdown();
  } else {
    std::cerr << "usage: qos_schema_doc qos|domain\n";
    return 2;
  }
  return 0;
}
