// Loading, resolving and checking QoS profile files (see profiles.hpp).
#include "qos/profiles.hpp"

#include <algorithm>
#include <array>
#include <cstdlib>
#include <functional>
#include <set>
#include <utility>

#include <dds/core/Exception.hpp>

#include "core/yaml_schema.hpp"
#include "qos/checks.hpp"
#include "qos/schema.hpp"

#ifndef SPINDLE_QOS_PROFILE_DIR
#error "SPINDLE_QOS_PROFILE_DIR (the installed profile folder) is set by qos/sources.cmake"
#endif

namespace spindle::qos {

namespace fs = std::filesystem;

namespace {

using core::YamlError;
using core::YamlReader;

// One profile section: its keys, how a value is stored, how the result is checked.
struct Section {
  std::string_view name;
  std::vector<const core::FieldSpec*> specs;
  std::function<void(ProfileQos&, std::size_t, const core::Value&)> apply;
  std::function<std::optional<Inconsistency>(const ProfileQos&)> check;
};

template <class Q>
Section make_section(Q ProfileQos::*member) {
  const auto& fields = section_fields<Q>();
  return {section_name<Q>, core::specs_of(fields),
          [member, &fields](ProfileQos& p, std::size_t i, const core::Value& v) {
            fields[i].set(p.*member, v);
          },
          [member](const ProfileQos& p) { return find_inconsistency(p.*member); }};
}

const std::vector<Section>& sections() {
  static const std::vector<Section> all = {
      make_section(&ProfileQos::participant), make_section(&ProfileQos::topic),
      make_section(&ProfileQos::publisher),   make_section(&ProfileQos::subscriber),
      make_section(&ProfileQos::writer),      make_section(&ProfileQos::reader)};
  return all;
}

// One key set by one profile, with where it was written.
struct Setting {
  std::size_t section = 0;
  std::size_t field = 0;
  core::Value value;
  std::string source;
  int line = 0;
  std::string key;  // full key path, "profiles.p.writer.history.depth"
};

struct RawProfile {
  std::string name;
  std::string source;
  int line = 0;
  std::string base;  // empty: none
  int base_line = 0;
  std::vector<Setting> settings;
};

bool valid_profile_name(std::string_view name) {
  if (name.empty()) return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '-' || c == '.';
  });
}

std::vector<std::string_view> key_names(const std::vector<KeyDoc>& keys) {
  std::vector<std::string_view> out;
  for (const auto& k : keys)
    out.push_back(k.key);
  return out;
}

std::string joined(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names)
    out += (out.empty() ? "" : ", ") + n;
  return out.empty() ? "none" : out;
}

class Loader {
 public:
  explicit Loader(const std::vector<fs::path>& search_path) : search_(search_path) {}

  // Loads the main file (given as text) and what it includes.
  void load(std::string_view text, const std::string& source, const fs::path& dir,
            const std::optional<fs::path>& canonical) {
    if (canonical) stack_.push_back(*canonical);
    read(text, source, dir, true);
    if (canonical) {
      stack_.pop_back();
      done_.insert(*canonical);
    }
  }

  std::map<std::string, RawProfile, std::less<>> profiles;
  std::vector<std::string> order;  // profile names in load order
  std::vector<std::string> own;    // profiles of the main file

 private:
  void read(std::string_view text, const std::string& source, const fs::path& dir, bool main) {
    const YamlReader r(source);
    const YAML::Node root = core::parse_yaml(text, source);
    const auto top = key_names(file_keys());
    r.expect_map(root, "", top);
    core::check_version(r, root, kProfileFormatVersion);
    if (const auto inc = YamlReader::find(root, "include"); inc.IsDefined()) {
      if (!inc.IsSequence()) r.fail(inc, "include", "expected a list of file names");
      for (std::size_t i = 0; i < inc.size(); ++i)
        include(r, inc[i], YamlReader::item("include", i), dir);
    }
    const auto profs = YamlReader::find(root, "profiles");
    if (!profs.IsDefined() || profs.IsNull()) return;
    if (!profs.IsMap()) r.fail(profs, "profiles", "expected a mapping of profile names");
    std::vector<std::string> seen;
    for (const auto& kv : profs) {
      if (!kv.first.IsScalar()) r.fail(kv.first, "profiles", "a profile name must be a string");
      const auto& name = kv.first.Scalar();
      const auto key = YamlReader::join("profiles", name);
      if (!valid_profile_name(name))
        r.fail(kv.first, key,
               "a profile name holds letters, digits, '_', '-' and '.' only, got '" + name + "'");
      if (auto it = profiles.find(name); it != profiles.end())
        r.fail(kv.first, key,
               "profile '" + name + "' is already defined at " + it->second.source + ":" +
                   std::to_string(it->second.line));
      profiles.emplace(name, profile(r, kv.first, kv.second, name, key));
      order.push_back(name);
      if (main) own.push_back(name);
    }
  }

  RawProfile profile(const YamlReader& r, const YAML::Node& name_node, const YAML::Node& n,
                     const std::string& name, const std::string& key) {
    RawProfile p;
    p.name = name;
    p.source = r.source();
    p.line = core::line_of(name_node);
    const auto allowed = key_names(profile_keys());
    r.expect_map(n, key, allowed);
    if (!n.IsMap()) return p;
    for (const auto& kv : n) {
      const auto& k = kv.first.Scalar();
      const auto path = YamlReader::join(key, k);
      if (k == "base") {
        p.base = r.text(kv.second, path);
        p.base_line = core::line_of(kv.second);
        if (p.base.empty()) r.fail(kv.second, path, "must name a profile");
        continue;
      }
      if (k == "description") {
        (void)r.text(kv.second, path);
        continue;
      }
      const auto& all = sections();
      const auto s = static_cast<std::size_t>(
          std::find_if(all.begin(), all.end(), [&](const Section& x) { return x.name == k; }) -
          all.begin());
      core::walk_fields(
          r, kv.second, path, all[s].specs,
          [&](std::size_t i, const YAML::Node&, const YAML::Node& value, const std::string& vkey) {
            p.settings.push_back(Setting{s, i, core::read_value(r, value, vkey, *all[s].specs[i]),
                                         r.source(), core::line_of(value), vkey});
          });
    }
    return p;
  }

  void include(const YamlReader& r, const YAML::Node& n, const std::string& key,
               const fs::path& dir) {
    const fs::path name = r.text(n, key);
    if (name.empty()) r.fail(n, key, "must name a file");
    std::vector<fs::path> where;
    where.push_back(dir);
    where.insert(where.end(), search_.begin(), search_.end());
    fs::path found;
    for (const auto& d : where) {
      std::error_code ec;
      const auto candidate = name.is_absolute() ? name : (d / name).lexically_normal();
      if (fs::is_regular_file(candidate, ec)) {
        found = candidate;
        break;
      }
      if (name.is_absolute()) break;
    }
    if (found.empty()) {
      std::string looked;
      for (const auto& d : where)
        looked += (looked.empty() ? "" : ", ") + d.string();
      r.fail(n, key, "cannot find '" + name.string() + "' (looked in " + looked + ")");
    }
    std::error_code ec;
    const auto canonical = fs::weakly_canonical(found, ec);
    if (std::find(stack_.begin(), stack_.end(), canonical) != stack_.end()) {
      std::string chain;
      for (const auto& f : stack_)
        chain += f.filename().string() + " -> ";
      r.fail(n, key, "include cycle: " + chain + canonical.filename().string());
    }
    if (done_.contains(canonical)) return;
    const auto text = core::read_text_file(found, "QoS profile file");
    stack_.push_back(canonical);
    read(text, found.string(), found.parent_path(), false);
    stack_.pop_back();
    done_.insert(canonical);
  }

  const std::vector<fs::path>& search_;
  std::vector<fs::path> stack_;  // files being read, outermost first (include cycles)
  std::set<fs::path> done_;      // files fully read (diamond includes are read once)
};

// The chain of profiles `name` inherits from, root first, `name` last.
std::vector<const RawProfile*> chain_of(const Loader& l, const RawProfile& p) {
  std::vector<const RawProfile*> chain{&p};
  while (!chain.back()->base.empty()) {
    const auto& cur = *chain.back();
    const YamlReader r(cur.source);
    const auto key = "profiles." + cur.name + ".base";
    const auto it = l.profiles.find(cur.base);
    if (it == l.profiles.end())
      r.fail_at_line(cur.base_line, key,
                     "unknown base profile '" + cur.base + "' (known: " + joined(l.order) + ")");
    const auto loop = std::find(chain.begin(), chain.end(), &it->second);
    if (loop != chain.end()) {
      std::string cycle;
      for (auto i = loop; i != chain.end(); ++i)
        cycle += (*i)->name + " -> ";
      r.fail_at_line(cur.base_line, key, "inheritance cycle: " + cycle + it->second.name);
    }
    chain.push_back(&it->second);
  }
  std::reverse(chain.begin(), chain.end());
  return chain;
}

ProfileQos build(const Loader& l, const RawProfile& p) {
  ProfileQos q;
  // The setting that last wrote each (section, field), and when.
  std::map<std::pair<std::size_t, std::size_t>, std::pair<std::size_t, const Setting*>> last;
  std::size_t ordinal = 0;
  for (const auto* raw : chain_of(l, p)) {
    for (const auto& s : raw->settings) {
      sections()[s.section].apply(q, s.field, s.value);
      last[{s.section, s.field}] = {++ordinal, &s};
    }
  }
  for (std::size_t i = 0; i < sections().size(); ++i) {
    const auto& sec = sections()[i];
    const auto bad = sec.check(q);
    if (!bad) continue;
    const Setting* culprit = nullptr;
    std::size_t newest = 0;
    for (const auto& k : bad->keys) {
      const auto f = std::find_if(sec.specs.begin(), sec.specs.end(),
                                  [&](const core::FieldSpec* s) { return s->key == k; });
      const auto it = last.find({i, static_cast<std::size_t>(f - sec.specs.begin())});
      if (it != last.end() && it->second.first > newest) {
        newest = it->second.first;
        culprit = it->second.second;
      }
    }
    std::string message = bad->message;
    if (culprit == nullptr) {
      throw dds::core::InconsistentPolicyError(
          YamlError(p.source, p.line, "profiles." + p.name + "." + std::string(sec.name), message)
              .what());
    }
    if (culprit->key.rfind("profiles." + p.name + ".", 0) != 0)
      message += " (in profile '" + p.name + "')";
    throw dds::core::InconsistentPolicyError(
        YamlError(culprit->source, culprit->line, culprit->key, message).what());
  }
  return q;
}

}  // namespace

ProfileLibrary ProfileLibrary::load(const fs::path& file,
                                    const std::vector<fs::path>& search_path) {
  try {
    const auto text = core::read_text_file(file, "QoS profile file");
    std::error_code ec;
    const auto canonical = fs::weakly_canonical(file, ec);
    return build_library(text, file.string(), file.parent_path(),
                         ec ? std::nullopt : std::optional(canonical), search_path);
  } catch (const YamlError& e) {
    throw dds::core::InvalidArgumentError(e.what());
  }
}

ProfileLibrary ProfileLibrary::parse(std::string_view yaml, const std::string& source,
                                     const std::vector<fs::path>& search_path,
                                     const fs::path& include_dir) {
  try {
    return build_library(yaml, source, include_dir, std::nullopt, search_path);
  } catch (const YamlError& e) {
    throw dds::core::InvalidArgumentError(e.what());
  }
}

ProfileLibrary ProfileLibrary::build_library(std::string_view text, const std::string& source,
                                             const fs::path& dir,
                                             const std::optional<fs::path>& canonical,
                                             const std::vector<fs::path>& search_path) {
  Loader l(search_path);
  l.load(text, source, dir, canonical);
  ProfileLibrary lib;
  lib.source_ = source;
  for (const auto& name : l.order)
    lib.profiles_.emplace(name, build(l, l.profiles.at(name)));
  lib.own_ = l.own;
  return lib;
}

const ProfileQos& ProfileLibrary::profile(std::string_view name) const {
  const auto it = profiles_.find(name);
  if (it == profiles_.end())
    throw dds::core::InvalidArgumentError(source_ + ": no QoS profile '" + std::string(name) +
                                          "' (known: " + joined(names()) + ")");
  return it->second;
}

std::vector<std::string> ProfileLibrary::names() const {
  std::vector<std::string> out;
  for (const auto& [name, q] : profiles_)
    out.push_back(name);
  return out;
}

std::vector<fs::path> default_search_path() {
  std::vector<fs::path> out;
  if (const char* env = std::getenv("SPINDLE_QOS_PATH")) {
    std::string_view rest(env);
    while (!rest.empty()) {
      const auto colon = rest.find(':');
      const auto dir = rest.substr(0, colon);
      if (!dir.empty()) out.emplace_back(dir);
      if (colon == std::string_view::npos) break;
      rest.remove_prefix(colon + 1);
    }
  }
  out.emplace_back(SPINDLE_QOS_PROFILE_DIR);
  return out;
}

std::optional<fs::path> find_profile_file(const fs::path& name,
                                          const std::vector<fs::path>& search_path) {
  std::error_code ec;
  if (fs::is_regular_file(name, ec)) return name;
  if (name.is_absolute()) return std::nullopt;
  for (const auto& dir : search_path)
    if (fs::is_regular_file(dir / name, ec)) return dir / name;
  return std::nullopt;
}

}  // namespace spindle::qos
