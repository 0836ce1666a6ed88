// libFuzzer target for the filter and query language (filter/expression.hpp): any text and
// parameters give a compiled expression or a FilterError whose column lies within the text
// (or is 0), never a crash, a hang or another exception. Byte 0 picks the grammar (even:
// filter, odd: query); the rest is the expression, then the parameters, each after a NUL.
// Properties checked on success: matches() and order() run on fixed samples, and setting
// the same parameters again succeeds and gives the same answers.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "filter/expression.hpp"
#include "filter_types.hpp"

namespace {

std::vector<filter_test::Sample> samples() {
  std::vector<filter_test::Sample> out(3);
  out[1].flag = true;
  out[1].letter = 'x';
  out[1].i64 = -1;
  out[1].u64 = ~std::uint64_t{0};
  out[1].f64 = 1e300;
  out[1].name = "hello";
  out[1].color = filter_test::Color::blue;
  out[1].maybe = 7;
  out[1].extra.emplace();
  out[1].extra->weight = 2.5;
  out[2].f64 = __builtin_nan("");
  out[2].name = "a string longer than the small-string buffer of std::string";
  out[2].inner.label = "%_";
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string_view input(reinterpret_cast<const char*>(data) + 1, size - 1);  // NOLINT
  const auto grammar =
      data[0] % 2 == 0 ? spindle::filter::Grammar::filter : spindle::filter::Grammar::query;
  std::vector<std::string> parts;
  std::size_t at = 0;
  while (true) {
    const std::size_t nul = input.find('\0', at);
    parts.emplace_back(input.substr(at, nul == std::string_view::npos ? nul : nul - at));
    if (nul == std::string_view::npos) break;
    at = nul + 1;
  }
  const std::string text = parts.front();
  const std::vector<std::string> params(parts.begin() + 1, parts.end());
  static const auto kSamples = samples();
  try {
    auto e =
        spindle::filter::Expression::compile(text, filter_test::sample_info(), params, grammar);
    std::vector<bool> before;
    for (const auto& s : kSamples)
      before.push_back(e.matches(&s));
    for (const auto& a : kSamples)
      for (const auto& b : kSamples)
        (void)e.order(&a, &b);
    e.set_parameters(params);
    for (std::size_t i = 0; i < kSamples.size(); ++i)
      if (e.matches(&kSamples[i]) != before[i]) __builtin_trap();
  } catch (const spindle::filter::FilterError& err) {
    if (err.column() > text.size() + 1) __builtin_trap();
  }
  return 0;
}
