// libFuzzer target for the join request parser (group/join.hpp): any bytes give a request
// or a message naming what is wrong, never a crash, a hang or an exception. An accepted
// request re-encodes to text that parses back to the same request.
//
// Threading: single-threaded (libFuzzer's).
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "group/join.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  std::string error;
  const auto r = spindle::group::parse_join(text, error);
  if (!r) {
    if (!error.starts_with("join request")) __builtin_trap();
    return 0;
  }
  std::string again;
  const auto back = spindle::group::parse_join(spindle::group::encode(*r), again);
  if (!back || back->domain_id != r->domain_id || back->node != r->node || back->port != r->port ||
      back->settings != r->settings)
    __builtin_trap();
  return 0;
}
