// libFuzzer target for the YAML loaders of QoS profiles and domain files: any bytes give a
// loaded value or a dds::core exception naming file, line and key, never a crash, a hang
// or another exception. Byte 0 picks the loader (even: QoS profiles, odd: domain file);
// the rest is the file. Properties checked on success: every profile's QoS is consistent,
// and a domain config rendered with to_yaml() reads back equal.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include <dds/core/Exception.hpp>

#include "config/domain_config.hpp"
#include "qos/checks.hpp"
#include "qos/profiles.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string_view text(reinterpret_cast<const char*>(data) + 1, size - 1);  // NOLINT
  try {
    if (data[0] % 2 == 0) {
      // Relative includes resolve in a folder that does not exist: inputs stay hermetic.
      const auto lib =
          spindle::qos::ProfileLibrary::parse(text, "fuzz.yaml", {}, "/nonexistent/spindle-fuzz");
      for (const auto& name : lib.names()) {
        const auto& p = lib.profile(name);
        spindle::qos::check_consistent(p.topic);
        spindle::qos::check_consistent(p.writer);
        spindle::qos::check_consistent(p.reader);
      }
    } else {
      const auto config = spindle::config::parse_domain_config(text, "fuzz.yaml");
      if (spindle::config::parse_domain_config(spindle::config::to_yaml(config), "again") != config)
        __builtin_trap();
    }
  } catch (const dds::core::Exception& e) {
    // Every rejection names the source.
    if (std::string_view(e.what()).find("fuzz.yaml") == std::string_view::npos &&
        std::string_view(e.what()).find("again") == std::string_view::npos)
      __builtin_trap();
  }
  return 0;
}
