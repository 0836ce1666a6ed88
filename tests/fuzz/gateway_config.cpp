// libFuzzer target: bytes as spindle-gateway's YAML configuration. parse_config either reads
// them into a Config that keeps the file's promises (two ends, a topic or pattern, every
// direction naming an end) or refuses them with a ConfigError that names the file; any other
// exception escapes and is reported as a crash.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "config.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    const auto c = spindle::gateway::parse_config(text, "/fuzz/gateway.yaml");
    if (c.ends.size() != 2 || c.ends[0].name == c.ends[1].name) std::abort();
    if (c.topics.empty() && c.patterns.empty()) std::abort();
    for (const auto& t : c.topics) {
      if (t.name.empty() || t.type.empty()) std::abort();
      if (t.to && *t.to != c.ends[0].name && *t.to != c.ends[1].name) std::abort();
    }
  } catch (const spindle::gateway::ConfigError& e) {
    if (std::string(e.what()).rfind("/fuzz/gateway.yaml", 0) != 0) std::abort();
  }
  return 0;
}
