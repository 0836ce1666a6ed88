// The permissions document (see permissions.hpp).
#include "security/permissions.hpp"

#include "core/glob.hpp"
#include "core/yaml_reader.hpp"
#include "security/credentials.hpp"

#include <openssl/evp.h>

#include <algorithm>
#include <filesystem>

namespace spindle::security {

using core::YamlReader;

std::string_view to_string(Action a) noexcept {
  return a == Action::publish ? "publish" : "subscribe";
}

bool matches(std::string_view pattern, std::string_view name) noexcept {
  return core::glob_match(pattern, name);
}

std::string sha256_hex(std::string_view bytes) {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  if (EVP_Digest(bytes.data(), bytes.size(), md, &len, EVP_sha256(), nullptr) != 1) return {};
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (unsigned int i = 0; i < len; ++i) {
    out += kHex[md[i] >> 4];
    out += kHex[md[i] & 15];
  }
  return out;
}

Permissions Permissions::parse(std::string_view yaml, const std::string& source) {
  Permissions p;
  p.text_ = std::string(yaml);
  p.digest_ = sha256_hex(yaml);
  p.source_ = source;
  try {
    const YamlReader r(source);
    const YAML::Node root = core::parse_yaml(yaml, source);
    if (!root.IsMap()) r.fail(root, "", "expected a mapping with version, default and grants");
    r.expect_map(root, "", {"version", "default", "grants"});
    core::check_version(r, root, 1);
    const YAML::Node def = YamlReader::find(root, "default");
    if (!def.IsDefined()) r.fail(root, "default", "missing: say deny or allow");
    static constexpr std::string_view kDefaults[] = {"deny", "allow"};
    p.default_allow_ = r.choice(def, "default", kDefaults) == 1;
    const YAML::Node grants = YamlReader::find(root, "grants");
    if (grants.IsDefined() && !grants.IsNull()) {
      if (!grants.IsSequence()) r.fail(grants, "grants", "expected a list of grants");
      for (std::size_t i = 0; i < grants.size(); ++i) {
        const auto key = YamlReader::item("grants", i);
        const YAML::Node g = grants[i];
        if (!g.IsMap()) r.fail(g, key, "expected a mapping with subject, publish, subscribe");
        r.expect_map(g, key, {"subject", "publish", "subscribe", "partitions"});
        Grant grant;
        grant.line = core::line_of(g);
        const YAML::Node subject = YamlReader::find(g, "subject");
        if (!subject.IsDefined()) r.fail(g, key + ".subject", "missing");
        grant.subject = r.text(subject, key + ".subject");
        if (grant.subject != "*") {
          grant.subject = canonical_subject(grant.subject);
          if (grant.subject.find('=') == std::string::npos) {
            r.fail(subject, key + ".subject",
                   "expected an RFC 4514 subject such as \"CN=writer,O=Acme\" or \"*\", got '" +
                       grant.subject + "'");
          }
        }
        auto patterns = [&](std::string_view name, std::vector<std::string>& out) {
          const YAML::Node n = YamlReader::find(g, name);
          if (!n.IsDefined() || n.IsNull()) return;
          const auto k = key + "." + std::string(name);
          out = r.text_list(n, k);
          for (const auto& t : out)
            if (t.empty()) r.fail(n, k, "an empty pattern matches no topic");
        };
        patterns("publish", grant.publish);
        patterns("subscribe", grant.subscribe);
        const YAML::Node parts = YamlReader::find(g, "partitions");
        if (parts.IsDefined() && !parts.IsNull()) {
          grant.partitions = r.text_list(parts, key + ".partitions");
          if (grant.partitions.empty())
            r.fail(parts, key + ".partitions", "an empty list allows no partition; leave it out");
        }
        if (grant.publish.empty() && grant.subscribe.empty())
          r.fail(g, key, "grants nothing: give it publish or subscribe patterns");
        p.grants_.push_back(std::move(grant));
      }
    }
  } catch (const core::YamlError& e) {
    throw SecurityError(e.what());
  }
  return p;
}

Permissions Permissions::load(const std::string& path) {
  std::string text;
  try {
    text = core::read_text_file(path, "permissions file");
  } catch (const core::YamlError& e) {
    throw SecurityError(std::string("security.permissions: ") + e.what());
  }
  return parse(text, path);
}

Decision Permissions::decide(std::string_view subject, Action action, std::string_view topic,
                             const std::vector<std::string>& partitions) const {
  const std::string who = canonical_subject(subject);
  auto list = [action](const Grant& g) -> const std::vector<std::string>& {
    return action == Action::publish ? g.publish : g.subscribe;
  };
  auto names_topic = [&](const Grant& g) {
    return std::any_of(list(g).begin(), list(g).end(),
                       [&](const std::string& pat) { return matches(pat, topic); });
  };
  auto partitions_ok = [&](const Grant& g) {
    if (g.partitions.empty()) return true;
    const std::vector<std::string> def{""};
    const auto& mine = partitions.empty() ? def : partitions;
    return std::all_of(mine.begin(), mine.end(), [&](const std::string& part) {
      return std::any_of(g.partitions.begin(), g.partitions.end(),
                         [&](const std::string& pat) { return matches(pat, part); });
    });
  };
  bool named = false;
  for (std::size_t i = 0; i < grants_.size(); ++i) {
    const auto& g = grants_[i];
    if (!names_topic(g)) continue;
    named = true;
    if ((g.subject == "*" || g.subject == who) && partitions_ok(g)) {
      return {true, "grants[" + std::to_string(i) + "] (" +
                        std::filesystem::path(source_).filename().string() + ":" +
                        std::to_string(g.line) + ")"};
    }
  }
  const std::string none = "no grant of " + std::filesystem::path(source_).filename().string() +
                           " lets " + who + " " + std::string(to_string(action)) + " '" +
                           std::string(topic) + "'";
  if (!default_allow_) return {false, "default: deny (" + none + ")"};
  if (named)
    return {
        false,
        none + ", and grants name the topic (default: allow covers only topics no grant names)"};
  return {true, "default: allow (no grant names '" + std::string(topic) + "')"};
}

}  // namespace spindle::security
