// The permissions document of a secured domain (DESIGN §12, docs/security.md): who may
// publish and subscribe which topics, by certificate subject. Every member holds the same
// document (its SHA-256 is a setting every member must share, compared at join); the
// subgroup layout enforces it, so a process without a subscribe grant is never in a topic's
// subgroup and never receives a byte of it.
//
//   version: 1
//   default: deny                       deny | allow
//   grants:
//     - subject: "CN=writer"            an RFC 4514 subject, or "*": every member
//       publish: [Secret, "Track*"]     topic name patterns ('*' any run, '?' one character)
//       subscribe: [Public]
//       partitions: ["ops", "*"]        optional: the endpoint's partitions must each match one
//
// A grant applies to an endpoint when its subject is the endpoint's participant's and one of
// its patterns matches the topic (and, if it lists partitions, each of the endpoint's
// partitions — the default partition is "" — matches one of them). With `default: deny` an
// endpoint no grant covers is refused. With `default: allow` only topics some grant names
// (for that action) are restricted to the grants naming them; every other topic is open.
//
// Threading: an immutable value; every member function may be called from any thread.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace spindle::security {

enum class Action : unsigned char { publish, subscribe };
[[nodiscard]] std::string_view to_string(Action a) noexcept;

struct Grant {
  std::string subject;  // canonical RFC 4514, or "*"
  std::vector<std::string> publish;
  std::vector<std::string> subscribe;
  std::vector<std::string> partitions;  // empty: any
  int line = 0;                         // where it stands in the file
  friend bool operator==(const Grant&, const Grant&) = default;
};

// A decision and the rule that made it, in words ("grants[0] (perms.yaml:4)", "default:
// deny (no grant gives CN=outsider subscribe on Secret)").
struct Decision {
  bool allowed = false;
  std::string rule;
};

class Permissions {
 public:
  // Parses the document; `source` names it in errors ("perms.yaml:7: grants[1].publish: ...").
  // Throws SecurityError (credentials.hpp).
  [[nodiscard]] static Permissions parse(std::string_view yaml, const std::string& source);
  [[nodiscard]] static Permissions load(const std::string& path);

  [[nodiscard]] Decision decide(std::string_view subject, Action action, std::string_view topic,
                                const std::vector<std::string>& partitions) const;
  [[nodiscard]] bool allows(std::string_view subject, Action action, std::string_view topic,
                            const std::vector<std::string>& partitions) const {
    return decide(subject, action, topic, partitions).allowed;
  }

  [[nodiscard]] bool default_allow() const noexcept { return default_allow_; }
  [[nodiscard]] const std::vector<Grant>& grants() const noexcept { return grants_; }
  // SHA-256 of the document's bytes, hex (what `sha256sum` prints).
  [[nodiscard]] const std::string& digest() const noexcept { return digest_; }
  [[nodiscard]] const std::string& text() const noexcept { return text_; }
  [[nodiscard]] const std::string& source() const noexcept { return source_; }

 private:
  bool default_allow_ = false;
  std::vector<Grant> grants_;
  std::string digest_;
  std::string text_;
  std::string source_;
};

// The must-agree setting (a joiner's and the domain's must be equal) that holds the
// document's digest.
inline constexpr std::string_view kPermissionsSetting = "security.permissions";

// fnmatch-style: '*' any run of characters, '?' one, everything else itself.
[[nodiscard]] bool matches(std::string_view pattern, std::string_view name) noexcept;

// SHA-256 of bytes, hex.
[[nodiscard]] std::string sha256_hex(std::string_view bytes);

}  // namespace spindle::security
