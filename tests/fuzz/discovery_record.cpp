// libFuzzer target for the discovery record decoder (discovery/records.hpp): every participant
// decodes the records every other participant multicasts, so any bytes must give a record
// or a message, never a crash, a hang or an exception. Each input is decoded as each kind
// of record: writer, reader, participant and topic. Properties checked: a rejection has a message
// naming the record kind; an accepted record leaves the message empty, has consistent QoS, and
// re-encodes to exactly the input (the format is canonical among version-3 records; an older
// version-2 record is re-encoded in version 3).
//
// Threading: single-threaded (libFuzzer's).
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "discovery/records.hpp"
#include "qos/checks.hpp"

namespace {

template <class Decoded>
void check(const Decoded& decoded, const std::string& error, std::string_view prefix,
           std::span<const std::byte> input) {
  if (!decoded) {
    if (!error.starts_with(prefix)) __builtin_trap();
    return;
  }
  if (!error.empty()) __builtin_trap();
  if (spindle::qos::find_inconsistency(decoded->qos)) __builtin_trap();
  const auto again = spindle::discovery::encode(*decoded);
  if (input[0] != std::byte{spindle::discovery::kDiscoveryVersion}) return;  // older: re-encoded
  if (!std::equal(again.begin(), again.end(), input.begin(), input.end())) __builtin_trap();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto input = std::as_bytes(std::span(data, size));
  std::string error;
  check(spindle::discovery::decode_writer(input, error), error, "writer record: ", input);
  error.clear();
  check(spindle::discovery::decode_reader(input, error), error, "reader record: ", input);
  error.clear();
  check(spindle::discovery::decode_participant(input, error), error, "participant record: ", input);
  error.clear();
  check(spindle::discovery::decode_topic(input, error), error, "topic record: ", input);
  return 0;
}
