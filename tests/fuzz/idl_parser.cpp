// libFuzzer entry point for the idlc front end: any bytes must give either a Specification
// or diagnostics, never a crash, a hang or a leak (STYLE 7, 13).
#include <spindle/idlc/frontend.hpp>

#include <cstddef>
#include <cstdint>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);  // NOLINT
  spindle::idlc::Diagnostics diags;
  const spindle::idlc::FrontendOptions options;  // no include directories
  const auto spec = spindle::idlc::parse_text(text, "fuzz.idl", options, diags);
  // Touch the results so that nothing is optimized away and every message is formatted.
  size_t total = spec ? spec->definitions.size() : 0;
  for (const auto& d : diags.all()) {
    total += d.str().size();
  }
  return total == SIZE_MAX ? 1 : 0;
}
