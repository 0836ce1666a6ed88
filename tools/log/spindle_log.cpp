// spindle-log: looks at the durable logs of the `logged` consistency level
// (docs/log-format.md) without opening them for writing, so it is safe on a log that a
// participant has open:
//   spindle-log list <dir-or-root>    each log at or under it: segments, records, orders, bytes
//   spindle-log verify <dir>          every header, record CRC, order and index entry
//   spindle-log dump <dir> [--from view:seq] [--limit n] [--hex] [--skip-damage]
//                                     one line per record; with --skip-damage past damaged
//                                     stretches, as a participant's replay goes (each named)
// Exit status: 0 clean, 1 damaged (verify found damage, dump or list met it), 2 usage or
// I/O error.
//
// Threading: single-threaded.
#include <charconv>
#include <cstdint>
#include <ctime>
#include <filesystem>
#include <iostream>
#include <optional>
#include <string>

#include <CLI/CLI.hpp>

#include "storage/log.hpp"

namespace fs = std::filesystem;
namespace st = spindle::storage;

namespace {

std::optional<st::Order> parse_order(const std::string& s) {
  const auto colon = s.find(':');
  if (colon == std::string::npos) return std::nullopt;
  st::Order o;
  const char* end = s.data() + s.size();
  auto [p1, e1] = std::from_chars(s.data(), s.data() + colon, o.view);
  auto [p2, e2] = std::from_chars(s.data() + colon + 1, end, o.seq);
  if (e1 != std::errc{} || p1 != s.data() + colon || e2 != std::errc{} || p2 != end || colon == 0 ||
      colon + 1 == s.size())
    return std::nullopt;
  return o;
}

std::string format_time(std::int64_t ns) {
  std::int64_t secs = ns / 1'000'000'000;
  std::int64_t frac = ns % 1'000'000'000;
  if (frac < 0) {
    frac += 1'000'000'000;
    --secs;
  }
  const auto t = static_cast<std::time_t>(secs);
  std::tm tm{};
  if (::gmtime_r(&t, &tm) == nullptr) return std::to_string(ns) + "ns";
  char date[32];
  std::strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%S", &tm);
  char out[64];
  std::snprintf(out, sizeof out, "%s.%09lldZ", date, static_cast<long long>(frac));
  return out;
}

// A directory that exists and holds segments; else a message and false.
bool is_log(const fs::path& dir) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) {
    std::cerr << "spindle-log: " << dir.string() << ": not a directory\n";
    return false;
  }
  const auto logs = st::find_logs(dir);
  if (logs.empty() || logs.front() != dir) {
    std::cerr << "spindle-log: " << dir.string() << ": no log here (no *.seg file)\n";
    return false;
  }
  return true;
}

int list(const fs::path& root) {
  std::error_code ec;
  if (!fs::is_directory(root, ec)) {
    std::cerr << "spindle-log: " << root.string() << ": not a directory\n";
    return 2;
  }
  int status = 0;
  const auto logs = st::find_logs(root);
  if (logs.empty()) std::cout << "no logs under " << root.string() << "\n";
  for (const auto& dir : logs) {
    const st::VerifyReport v = st::verify(dir);
    std::cout << dir.string() << ": " << v.segments.size() << " segments, " << v.records
              << " records";
    if (v.first) std::cout << ", first " << st::to_string(*v.first);
    if (v.last) std::cout << ", last " << st::to_string(*v.last);
    std::cout << ", " << v.bytes << " bytes";
    if (!v.clean()) {
      std::cout << ", DAMAGED (spindle-log verify " << dir.string() << ")";
      status = 1;
    }
    std::cout << "\n";
  }
  return status;
}

int verify(const fs::path& dir) {
  if (!is_log(dir)) return 2;
  const st::VerifyReport v = st::verify(dir);
  std::cout << v.to_string() << "\n";
  return v.clean() ? 0 : 1;
}

int dump(const fs::path& dir, st::Order from, std::uint64_t limit, bool hex, bool skip_damage) {
  if (!is_log(dir)) return 2;
  st::Cursor c = st::read_log(dir, from, skip_damage);
  std::size_t told = 0;  // stretches skipped and printed
  auto tell = [&] {
    for (; told < c.skipped().size(); ++told)
      std::cout << "skipped " << c.skipped()[told].to_string() << "\n";
  };
  static constexpr char kDigits[] = "0123456789abcdef";
  for (std::uint64_t n = 0; n < limit; ++n) {
    const auto r = c.next();
    tell();
    if (!r) break;
    std::cout << st::to_string(r->order) << " kind=" << r->kind
              << " time=" << format_time(r->time_ns) << " size=" << r->payload.size()
              << " segment=" << r->segment << " offset=" << r->offset;
    if (hex) {
      std::string h;
      h.reserve(r->payload.size() * 2 + 1);
      h += ' ';
      for (const std::byte b : r->payload) {
        h += kDigits[std::to_integer<unsigned>(b) >> 4];
        h += kDigits[std::to_integer<unsigned>(b) & 15];
      }
      std::cout << h;
    }
    std::cout << "\n";
  }
  tell();
  return c.skipped().empty() ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"spindle-log: lists, verifies and dumps Spindle DDS durable logs (read only)."};
  app.require_subcommand(1);
  std::string path;
  auto* list_cmd = app.add_subcommand("list", "Each log at or under a directory, summed up");
  list_cmd->add_option("root", path, "A log directory or a directory above logs")->required();
  auto* verify_cmd =
      app.add_subcommand("verify", "Check every record of a log; exit 0 clean, 1 damaged");
  verify_cmd->add_option("dir", path, "The log directory")->required();
  auto* dump_cmd = app.add_subcommand("dump", "One line per record");
  dump_cmd->add_option("dir", path, "The log directory")->required();
  std::string from_text;
  std::uint64_t limit = UINT64_MAX;
  bool hex = false;
  dump_cmd->add_option("--from", from_text, "Start at the first record at or after view:seq")
      ->check(CLI::Validator(
          [](const std::string& v) -> std::string {
            return parse_order(v) ? "" : v + " is not view:seq (two unsigned integers)";
          },
          "VIEW:SEQ"));
  dump_cmd->add_option("--limit", limit, "Records at most")->check(CLI::PositiveNumber);
  dump_cmd->add_flag("--hex", hex, "Print each payload in hexadecimal");
  bool skip_damage = false;
  dump_cmd->add_flag("--skip-damage", skip_damage,
                     "Go on past damaged stretches (each printed; exit 1) as a replay does");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? 0 : 2;
  }
  try {
    if (list_cmd->parsed()) return list(path);
    if (verify_cmd->parsed()) return verify(path);
    const st::Order from = from_text.empty() ? st::Order{} : *parse_order(from_text);
    return dump(path, from, limit, hex, skip_damage);
  } catch (const st::LogError& e) {
    std::cout.flush();
    std::cerr << "spindle-log: " << e.what() << "\n";
    return e.sys_errno() == 0 ? 1 : 2;  // bad data: damage; a system error: I/O
  }
}
