// spindle-perf --plot (plot.hpp).
#include "plot.hpp"

#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>
#include <tuple>

extern char** environ;

namespace spindle_perf {

namespace {

// The value of `key=` in a result line (fields are separated by single spaces).
std::optional<std::string_view> field(std::string_view line, std::string_view key) {
  std::size_t at = 0;
  while (at < line.size()) {
    const auto end = std::min(line.find(' ', at), line.size());
    const auto token = line.substr(at, end - at);
    if (token.size() > key.size() && token.substr(0, key.size()) == key && token[key.size()] == '=')
      return token.substr(key.size() + 1);
    at = end + 1;
  }
  return std::nullopt;
}

std::string_view required(std::string_view line, std::string_view key) {
  const auto v = field(line, key);
  if (!v || v->empty()) throw std::invalid_argument("no " + std::string(key) + "=");
  return *v;
}

template <class N>
N number(std::string_view line, std::string_view key) {
  const auto text = required(line, key);
  N n{};
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
  if (ec != std::errc{} || end != text.data() + text.size())
    throw std::invalid_argument(std::string(key) + "=" + std::string(text) + " is not a number");
  return n;
}

// A name as a gnuplot title may hold it: letters, digits and . _ - + only.
std::string title_safe(std::string_view s) {
  std::string out;
  for (const char c : s)
    out += (std::isalnum(static_cast<unsigned char>(c)) != 0 || std::strchr("._-+", c) != nullptr)
               ? c
               : '_';
  return out;
}

}  // namespace

std::optional<Figure> parse_figure(std::string_view line) {
  if (line.substr(0, 5) != "peer=") return std::nullopt;
  Figure f;
  f.peer = std::string(required(line, "peer"));
  f.transport = std::string(required(line, "transport"));
  f.size = number<std::size_t>(line, "size");
  f.subs = number<std::uint32_t>(line, "subs");
  f.metric = std::string(required(line, "metric"));
  const auto v = required(line, "value");
  char* end = nullptr;
  const std::string text(v);
  f.value = std::strtod(text.c_str(), &end);
  if (end != text.c_str() + text.size())
    throw std::invalid_argument("value=" + text + " is not a number");
  return f;
}

std::vector<Figure> read_figures(std::istream& in, const std::string& source) {
  std::vector<Figure> out;
  std::string line;
  for (std::size_t n = 1; std::getline(in, line); ++n) {
    try {
      if (auto f = parse_figure(line)) out.push_back(std::move(*f));
    } catch (const std::invalid_argument& e) {
      throw std::invalid_argument(source + ":" + std::to_string(n) + ": " + e.what());
    }
  }
  return out;
}

std::string plot_script(const std::vector<Figure>& figures, const std::string& png) {
  // One series per (peer, transport): latency p50 (round trip) and throughput with one
  // subscriber, by size.
  using Key = std::pair<std::string, std::string>;
  std::map<Key, std::map<std::size_t, double>> latency;
  std::map<Key, std::map<std::size_t, double>> throughput;
  for (const auto& f : figures) {
    const Key k{title_safe(f.peer), title_safe(f.transport)};
    if (f.metric == "latency_us_p50") latency[k][f.size] = f.value;
    if (f.metric == "throughput_MBps" && f.subs == 1) throughput[k][f.size] = f.value;
  }
  std::ostringstream s;
  const auto blocks = [&](const char* name,
                          const std::map<Key, std::map<std::size_t, double>>& series) {
    std::size_t i = 0;
    for (const auto& [k, points] : series) {
      s << "$" << name << i++ << " << EOD\n";
      for (const auto& [size, v] : points)
        s << size << ' ' << v << '\n';
      s << "EOD\n";
    }
  };
  blocks("lat", latency);
  blocks("thr", throughput);
  const auto plot = [&](const char* name,
                        const std::map<Key, std::map<std::size_t, double>>& series) {
    if (series.empty()) {
      s << "set label 1 'no figures' at graph 0.5, 0.5 center\nplot NaN notitle\nunset label 1\n";
      return;
    }
    s << "plot ";
    std::size_t i = 0;
    for (const auto& [k, points] : series) {
      s << (i == 0 ? "" : ", ") << "$" << name << i << " with linespoints title '" << k.first << " "
        << k.second << "'";
      ++i;
    }
    s << '\n';
  };
  std::string out = png;
  for (std::size_t at = 0; (at = out.find('\'', at)) != std::string::npos; at += 2)
    out.replace(at, 1, "''");  // gnuplot's single-quoted string: a quote is doubled
  s << "set terminal pngcairo size 1200,520 font 'sans,10'\n"
    << "set output '" << out << "'\n"
    << "set multiplot layout 1,2 title 'spindle-perf'\n"
    << "set logscale x 2\nset logscale y 10\nset grid\nset key top left\n"
    << "set xlabel 'sample size (bytes)'\n"
    << "set ylabel 'round trip p50 (us)'\nset title 'latency'\n";
  plot("lat", latency);
  s << "set ylabel 'MB/s per subscriber (1 subscriber)'\nset title 'throughput'\n"
    << "set key bottom right\n";
  plot("thr", throughput);
  s << "unset multiplot\n";
  return s.str();
}

void plot(const std::vector<Figure>& figures, const std::string& png) {
  char script_path[] = "/tmp/spindle-perf-plot-XXXXXX";
  const int fd = ::mkstemp(script_path);
  if (fd < 0) throw std::runtime_error(std::string("--plot: a temporary file: ") + strerror(errno));
  ::close(fd);
  {
    std::ofstream script(script_path);
    script << plot_script(figures, png);
  }
  char gnuplot[] = "gnuplot";
  char* argv[] = {gnuplot, script_path, nullptr};
  pid_t pid = 0;
  const int spawned = ::posix_spawnp(&pid, "gnuplot", nullptr, nullptr, argv, environ);
  int status = 0;
  if (spawned == 0) ::waitpid(pid, &status, 0);
  std::filesystem::remove(script_path);
  if (spawned != 0)
    throw std::runtime_error("--plot: cannot run gnuplot (" + std::string(strerror(spawned)) +
                             "); install it (Debian: apt install gnuplot-nox)");
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    throw std::runtime_error("--plot: gnuplot failed to draw " + png);
}

}  // namespace spindle_perf
