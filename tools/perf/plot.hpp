// spindle-perf --plot: the figures of a run (and the peers' from /work/shared/peers, in the
// same line format) drawn by gnuplot into one PNG: round-trip latency (p50) and throughput
// per subscriber against the sample size, one line per peer and transport.
//
//   peer=<name> transport=<t> size=<bytes> subs=<n> metric=<m> value=<x>
//
// Threading: the calling thread only.
#pragma once

#include <cstddef>
#include <cstdint>
#include <istream>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace spindle_perf {

struct Figure {
  std::string peer;
  std::string transport;
  std::size_t size = 0;
  std::uint32_t subs = 0;
  std::string metric;
  double value = 0;
};

// One figure from a result line; nullopt for a line that is no result (it does not start
// with "peer="). A result line that is malformed throws std::invalid_argument saying what.
[[nodiscard]] std::optional<Figure> parse_figure(std::string_view line);

// Every figure of `in`; errors name `source`:line.
[[nodiscard]] std::vector<Figure> read_figures(std::istream& in, const std::string& source);

// The gnuplot script that draws `figures` into `png`.
[[nodiscard]] std::string plot_script(const std::vector<Figure>& figures, const std::string& png);

// Runs gnuplot on plot_script(); throws std::runtime_error saying what failed (gnuplot
// missing, or its exit status).
void plot(const std::vector<Figure>& figures, const std::string& png);

}  // namespace spindle_perf
