// Types back to IDL text (to_idl.hpp). Three steps: the order (a depth-first walk that puts a
// type after what it needs by value; a type reached again through a sequence while it is being
// defined, or one that can reach back to its user, gets a forward declaration instead; then
// each module's declarations kept together where that order allows), the names (the shortest
// scoped name that IDL's lookup resolves to the type from where it is used), and the text of
// each declaration with its annotations.
#include <spindle/types/to_idl.hpp>

#include <openssl/evp.h>

#include <algorithm>
#include <array>
#include <cfloat>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <map>
#include <set>
#include <stdexcept>
#include <string_view>
#include <tuple>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace spindle::types {
// Its own namespace: the types library is built as one unity source.
namespace to_idl_text {
namespace {

// Deeper than this the walk refuses (a chain of types from discovery can be long; a real one
// is not).
constexpr int kMaxDepth = 1000;

// IDL 4.2, 7.2.4: written as a name, each is escaped with a leading `_`. IDL compares them
// with identifiers case-insensitively.
constexpr std::string_view kKeywords[] = {
    "abstract",   "alias",    "any",        "attribute",  "bitfield",  "bitmask",     "bitset",
    "boolean",    "case",     "char",       "component",  "connector", "const",       "consumes",
    "context",    "custom",   "default",    "double",     "emits",     "enum",        "eventtype",
    "exception",  "factory",  "false",      "finder",     "fixed",     "float",       "getraises",
    "getter",     "home",     "import",     "in",         "inout",     "int16",       "int32",
    "int64",      "int8",     "interface",  "local",      "long",      "manages",     "map",
    "mirrorport", "module",   "multiple",   "native",     "object",    "octet",       "oneway",
    "out",        "port",     "porttype",   "primarykey", "private",   "provides",    "public",
    "publishes",  "raises",   "readonly",   "sequence",   "setraises", "setter",      "short",
    "string",     "struct",   "supports",   "switch",     "true",      "truncatable", "typedef",
    "typeid",     "typename", "typeprefix", "uint16",     "uint32",    "uint64",      "uint8",
    "union",      "unsigned", "uses",       "valuebase",  "valuetype", "void",        "wchar",
    "wstring",
};

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  return out;
}

bool is_keyword(std::string_view name) {
  const std::string l = lower(name);
  return std::find(std::begin(kKeywords), std::end(kKeywords), l) != std::end(kKeywords);
}

// `name` as IDL writes it: escaped when it is a keyword or starts with `_` (which IDL drops).
std::string identifier(const std::string& name) {
  const auto letter = [](char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); };
  const auto digit = [](char c) { return c >= '0' && c <= '9'; };
  bool ok = !name.empty() && (letter(name[0]) || name[0] == '_');
  for (const char c : name)
    ok = ok && (letter(c) || digit(c) || c == '_');
  if (!ok) throw std::invalid_argument("'" + name + "' cannot be written in IDL: no identifier");
  return name[0] == '_' || is_keyword(name) ? "_" + name : name;
}

// "A::B::T" as {"A", "B", "T"}.
std::vector<std::string> split(const std::string& scoped) {
  std::vector<std::string> out;
  size_t from = 0;
  for (size_t at = scoped.find("::"); at != std::string::npos; at = scoped.find("::", from)) {
    out.push_back(scoped.substr(from, at - from));
    from = at + 2;
  }
  out.push_back(scoped.substr(from));
  return out;
}

using Path = std::vector<std::string>;

std::string path_key(const Path& p, size_t n) {
  std::string out;
  for (size_t i = 0; i < n; ++i)
    out += lower(p[i]) + "::";
  return out;
}

// The id idlc gives a member under @hashid / @autoid(HASH): the first four bytes of the MD5 of
// its name, little-endian, in 28 bits (XTypes 1.3, 7.3.1.2.1.2).
uint32_t hash_id(const std::string& name) {
  std::array<unsigned char, EVP_MAX_MD_SIZE> md{};
  unsigned len = 0;
  if (EVP_Digest(name.data(), name.size(), md.data(), &len, EVP_md5(), nullptr) != 1 || len < 4)
    throw std::runtime_error("OpenSSL MD5 failed");
  const uint32_t v = static_cast<uint32_t>(md[0]) | (static_cast<uint32_t>(md[1]) << 8) |
                     (static_cast<uint32_t>(md[2]) << 16) | (static_cast<uint32_t>(md[3]) << 24);
  return v & 0x0FFFFFFFU;
}

std::string hex(uint32_t v, int digits) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "%0*x", digits, v);
  return buf;
}

std::string char_literal(int64_t code, bool wide) {
  const auto c = static_cast<uint32_t>(code);
  std::string out = wide ? "L'" : "'";
  if (c == '\'' || c == '\\') {
    out += '\\';
    out += static_cast<char>(c);
  } else if (c >= 0x20 && c < 0x7F) {
    out += static_cast<char>(c);
  } else if (c <= 0xFF) {
    out += "\\x" + hex(c, 2);
  } else {
    out += "\\u" + hex(c & 0xFFFFU, 4);
  }
  return out + "'";
}

// A narrow string keeps its bytes (each one that is not printable ASCII as \xHH); a wide one
// its characters (\uHHHH, or the UTF-8 itself past the BMP).
std::string string_literal(const std::string& s, bool wide) {
  std::string out = wide ? "L\"" : "\"";
  for (size_t i = 0; i < s.size(); ++i) {
    const auto b = static_cast<unsigned char>(s[i]);
    if (b == '"' || b == '\\') {
      out += '\\';
      out += static_cast<char>(b);
    } else if (b >= 0x20 && b < 0x7F) {
      out += static_cast<char>(b);
    } else if (!wide || b < 0x80) {
      out += "\\x" + hex(b, 2);
    } else {
      size_t len = (b & 0xE0) == 0xC0 ? 2 : (b & 0xF0) == 0xE0 ? 3 : 4;
      len = std::min(len, s.size() - i);
      uint32_t cp = b & (len == 2 ? 0x1FU : len == 3 ? 0x0FU : 0x07U);
      for (size_t k = 1; k < len; ++k)
        cp = (cp << 6) | (static_cast<unsigned char>(s[i + k]) & 0x3FU);
      if (cp <= 0xFFFF) {
        out += "\\u" + hex(cp, 4);
      } else {
        out.append(s, i, len);
      }
      i += len - 1;
    }
  }
  return out + "\"";
}

// The shortest text strtold reads back to `v`, always with a '.' or an exponent (an integer
// literal would be another constant).
std::string float_literal(long double v) {
  if (!std::isfinite(v)) throw std::invalid_argument("a NaN or infinite constant has no IDL");
  char buf[64];
  for (int digits = 1; digits <= LDBL_DECIMAL_DIG; ++digits) {
    std::snprintf(buf, sizeof buf, "%.*Lg", digits, v);
    if (std::strtold(buf, nullptr) == v) break;
  }
  std::string out = buf;
  if (out.find_first_of(".e") == std::string::npos) out += ".0";
  return out;
}

struct Edge {
  const Type* to;
  bool through_sequence;  // a forward declaration of `to` is enough
};

enum class Item : uint8_t { Forward, Define };

class Printer {
 public:
  void add_root(const Type& t) {
    if (!is_named(t.kind))
      throw std::invalid_argument(std::string("a ") + to_string(t.kind) +
                                  " has no name to declare in IDL");
    if (state_[&t] == State::Done) return;
    define(&t, 0);
    while (!pending_.empty()) {
      const Type* p = pending_.front();
      pending_.pop_front();
      if (state_[p] != State::Done) define(p, 0);
    }
  }

  std::string text() {
    for (const auto& item : items_)
      declare_names(*item.type);
    std::string out;
    Path open;
    for (const size_t i : order()) {
      const auto& [kind, t, needs] = items_[i];
      Path path = split(t->name);
      const std::string name = path.back();
      path.pop_back();
      size_t common = 0;
      while (common < open.size() && common < path.size() && open[common] == path[common])
        ++common;
      while (open.size() > common) {
        open.pop_back();
        out += indent(open.size()) + "};\n";
      }
      if (!out.empty()) out += "\n";
      while (open.size() < path.size()) {
        out += indent(open.size()) + "module " + identifier(path[open.size()]) + " {\n";
        open.push_back(path[open.size()]);
      }
      if (kind == Item::Forward) {
        out += indent(open.size()) + (t->kind == TypeKind::Struct ? "struct " : "union ") +
               identifier(name) + ";\n";
      } else {
        out += declaration(*t, name, open);
      }
    }
    while (!open.empty()) {
      open.pop_back();
      out += indent(open.size()) + "};\n";
    }
    return out;
  }

 private:
  enum class State : uint8_t { Unseen, Defining, Done };

  // ------------------------------------------------------------------ order
  static void collect(const Type* t, bool through_sequence, std::vector<Edge>& out, int depth) {
    if (t == nullptr) return;
    if (depth > kMaxDepth) throw std::invalid_argument("types nested too deep to print");
    if (is_named(t->kind)) {
      out.push_back({t, through_sequence});
      return;
    }
    switch (t->kind) {
      case TypeKind::Sequence:
        collect(t->element, true, out, depth + 1);
        break;
      case TypeKind::Array:
        collect(t->element, through_sequence, out, depth + 1);
        break;
      case TypeKind::Map:  // a map's key and value are needed whole
        collect(t->key, through_sequence, out, depth + 1);
        collect(t->element, through_sequence, out, depth + 1);
        break;
      default:
        break;
    }
  }

  const std::vector<Edge>& edges(const Type* t) {
    auto [it, fresh] = edges_.try_emplace(t);
    if (!fresh) return it->second;
    std::vector<Edge> out;
    if (t->base != nullptr) out.push_back({t->base, false});
    if (t->discriminator != nullptr) collect(t->discriminator, false, out, 0);
    for (const auto& m : t->members)
      collect(m.type, false, out, 0);
    for (const auto& c : t->cases)
      collect(c.member.type, false, out, 0);
    if (t->kind == TypeKind::Alias) collect(t->element, false, out, 0);
    it->second = std::move(out);
    return it->second;
  }

  // Whether `from` leads back to `to` (the two are then in one cycle).
  bool reaches(const Type* from, const Type* to) {
    std::unordered_set<const Type*> seen{from};
    std::vector<const Type*> todo{from};
    while (!todo.empty()) {
      const Type* t = todo.back();
      todo.pop_back();
      for (const Edge& e : edges(t)) {
        if (e.to == to) return true;
        if (seen.insert(e.to).second) todo.push_back(e.to);
      }
    }
    return false;
  }

  void define(const Type* t, int depth) {
    if (depth > kMaxDepth) throw std::invalid_argument("types nested too deep to print");
    state_[t] = State::Defining;
    std::vector<size_t> needs;
    if (auto f = forward_.find(t); f != forward_.end()) needs.push_back(f->second);
    for (const Edge& e : edges(t)) {
      const Type* d = e.to;
      const State s = state_[d];
      if (s == State::Done) {
        needs.push_back(defined_.at(d));
        continue;
      }
      const bool declarable = d->kind == TypeKind::Struct || d->kind == TypeKind::Union;
      // Through a sequence, in a cycle: declared now, defined once what it needs is.
      if (e.through_sequence && declarable && (d == t || s == State::Defining || reaches(d, t))) {
        auto [f, fresh] = forward_.try_emplace(d, items_.size());
        if (fresh) items_.push_back({Item::Forward, d, {}});
        needs.push_back(f->second);
        if (s == State::Unseen) pending_.push_back(d);
        continue;
      }
      if (s == State::Defining)
        throw std::invalid_argument("'" + t->name + "' and '" + d->name +
                                    "' hold each other other than through a sequence: no IDL");
      define(d, depth + 1);
      needs.push_back(defined_.at(d));
    }
    defined_.emplace(t, items_.size());
    items_.push_back({Item::Define, t, std::move(needs)});
    state_[t] = State::Done;
  }

  // The order of the text: items_ are already in an order IDL accepts; this one also keeps
  // each module's declarations together where the modules' dependencies allow (modules that
  // others need first), so that a module is opened as few times as it can be.
  std::vector<size_t> order() const {
    std::vector<std::string> module(items_.size());
    std::map<std::string, size_t> first;  // module -> its first item
    for (size_t i = 0; i < items_.size(); ++i) {
      module[i] = items_[i].type->name.substr(0, items_[i].type->name.rfind("::") + 1);
      first.try_emplace(module[i], i);
    }
    std::map<std::string, std::set<std::string>> uses;
    for (size_t i = 0; i < items_.size(); ++i)
      for (const size_t n : items_[i].needs)
        if (module[n] != module[i]) uses[module[i]].insert(module[n]);
    // Rank: depth-first post-order of the module graph (a cycle is cut where it is met).
    std::map<std::string, size_t> rank;
    std::set<std::string> seen;
    std::vector<std::pair<std::string, bool>> todo;  // (module, its uses are ranked)
    std::vector<std::pair<size_t, std::string>> starts;
    for (const auto& [m, i] : first)
      starts.emplace_back(i, m);
    std::sort(starts.begin(), starts.end());
    for (const auto& start : starts) {
      todo.emplace_back(start.second, false);
      while (!todo.empty()) {
        auto [m, expanded] = todo.back();
        todo.pop_back();
        if (expanded) {
          rank.try_emplace(m, rank.size());
          continue;
        }
        if (!seen.insert(m).second) continue;
        todo.emplace_back(m, true);
        const auto& u = uses[m];
        for (auto it = u.rbegin(); it != u.rend(); ++it)
          if (!seen.contains(*it)) todo.emplace_back(*it, false);
      }
    }
    // Kahn's algorithm: of the items ready, one of the module last written, else one of the
    // lowest ranked module; the earliest first.
    std::vector<size_t> waiting(items_.size());
    std::vector<std::vector<size_t>> users(items_.size());
    for (size_t i = 0; i < items_.size(); ++i) {
      waiting[i] = items_[i].needs.size();
      for (const size_t n : items_[i].needs)
        users[n].push_back(i);
    }
    std::set<std::tuple<size_t, size_t>> ready;  // (rank, index)
    for (size_t i = 0; i < items_.size(); ++i)
      if (waiting[i] == 0) ready.emplace(rank.at(module[i]), i);
    std::vector<size_t> out;
    std::string current;
    while (!ready.empty()) {
      auto pick = ready.begin();
      if (!out.empty()) {
        const size_t r = rank.at(current);
        auto same = ready.lower_bound({r, 0});
        if (same != ready.end() && std::get<0>(*same) == r) pick = same;
      }
      const size_t i = std::get<1>(*pick);
      ready.erase(pick);
      out.push_back(i);
      current = module[i];
      for (const size_t u : users[i])
        if (--waiting[u] == 0) ready.emplace(rank.at(module[u]), u);
    }
    return out;
  }

  // ------------------------------------------------------------------ names
  // What each scope declares (modules, types, enumerators), lower case, for name lookup.
  void declare_names(const Type& t) {
    const Path p = split(t.name);
    for (size_t i = 0; i < p.size(); ++i)
      scopes_[path_key(p, i)].insert(lower(p[i]));
    if (t.kind == TypeKind::Enum)
      for (const auto& e : t.enumerators)
        scopes_[path_key(p, p.size() - 1)].insert(lower(e.name));
  }

  bool declares(const Path& scope, size_t n, const std::string& name) const {
    auto it = scopes_.find(path_key(scope, n));
    return it != scopes_.end() && it->second.contains(lower(name));
  }

  // How code in module `from` names `name` of module `where`: the shortest suffix of its
  // scoped name whose first part IDL's lookup (innermost scope outwards) finds in the right
  // module, else the absolute name.
  std::string refer(const Path& where, const std::string& name, const Path& from) const {
    for (size_t k = where.size() + 1; k-- > 0;) {
      if (k > from.size() ||
          !std::equal(where.begin(), where.begin() + static_cast<std::ptrdiff_t>(k), from.begin()))
        continue;
      const std::string& first = k == where.size() ? name : where[k];
      bool shadowed = false;
      for (size_t n = from.size(); n > k && !shadowed; --n)
        shadowed = declares(from, n, first);
      if (shadowed) continue;
      std::string out;
      for (size_t i = k; i < where.size(); ++i)
        out += identifier(where[i]) + "::";
      return out + identifier(name);
    }
    std::string out;
    for (const auto& part : where)
      out += "::" + identifier(part);
    return out + "::" + identifier(name);
  }

  std::string refer(const Type& named, const Path& from) const {
    Path p = split(named.name);
    const std::string name = p.back();
    p.pop_back();
    return refer(p, name, from);
  }

  std::string enumerator(const Type& e, int64_t value, const Path& from) const {
    for (const auto& en : e.enumerators) {
      if (en.value == value) {
        Path p = split(e.name);
        p.pop_back();
        return refer(p, en.name, from);
      }
    }
    return std::to_string(value);  // no enumerator has it: IDL will say so
  }

  // ------------------------------------------------------------------ text
  static std::string indent(size_t level) { return std::string(2 * level, ' '); }

  std::string spec(const Type& t, const Path& from) const {
    if (is_primitive(t.kind)) return to_string(t.kind);
    if (is_named(t.kind)) return refer(t, from);
    const auto bound = [](uint64_t b) { return b == 0 ? std::string() : ", " + std::to_string(b); };
    switch (t.kind) {
      case TypeKind::String8:
      case TypeKind::String16:
        return std::string(t.kind == TypeKind::String8 ? "string" : "wstring") +
               (t.bound == 0 ? "" : "<" + std::to_string(t.bound) + ">");
      case TypeKind::Sequence:
        return "sequence<" + spec(*t.element, from) + bound(t.bound) + ">";
      case TypeKind::Map:
        return "map<" + spec(*t.key, from) + ", " + spec(*t.element, from) + bound(t.bound) + ">";
      default:
        throw std::invalid_argument(
            "an array inside an anonymous type has no IDL (a typedef of "
            "the array would)");
    }
  }

  // `type name[dims]` of a member or typedef.
  std::string declarator(const Type& t, const std::string& name, const Path& from) const {
    if (t.kind != TypeKind::Array) return spec(t, from) + " " + identifier(name);
    std::string out = spec(*t.element, from) + " " + identifier(name);
    for (const uint32_t d : t.dims)
      out += "[" + std::to_string(d) + "]";
    return out;
  }

  std::string literal(const Literal& l, const Type& member_type, const Path& from) const {
    const Type* m = &resolve(member_type);
    if (m->kind == TypeKind::Array && m->element != nullptr) m = &resolve(*m->element);
    if (const auto* b = std::get_if<bool>(&l)) return *b ? "TRUE" : "FALSE";
    if (const auto* i = std::get_if<int64_t>(&l)) {
      if (m->kind == TypeKind::Char8 || m->kind == TypeKind::Char16)
        return char_literal(*i, m->kind == TypeKind::Char16);
      if (m->kind == TypeKind::Enum) return enumerator(*m, *i, from);
      if (m->kind == TypeKind::Boolean) return *i != 0 ? "TRUE" : "FALSE";
      return std::to_string(*i);
    }
    if (const auto* u = std::get_if<uint64_t>(&l)) return std::to_string(*u);
    if (const auto* d = std::get_if<long double>(&l)) return float_literal(*d);
    return string_literal(std::get<std::string>(l), m->kind == TypeKind::String16);
  }

  std::string label(int64_t v, const Type& discriminator, const Path& from) const {
    const Type& d = resolve(discriminator);
    switch (d.kind) {
      case TypeKind::Boolean:
        return v != 0 ? "TRUE" : "FALSE";
      case TypeKind::Char8:
      case TypeKind::Char16:
        return char_literal(v, d.kind == TypeKind::Char16);
      case TypeKind::Enum:
        return enumerator(d, v, from);
      case TypeKind::Byte:
      case TypeKind::UInt8:
      case TypeKind::UInt16:
      case TypeKind::UInt32:
      case TypeKind::UInt64:
        return std::to_string(static_cast<uint64_t>(v));
      default:
        return std::to_string(v);
    }
  }

  // Whether every own member's id is its name's hash: @autoid(HASH) says it once.
  static bool hashed(const std::vector<const Member*>& members) {
    return !members.empty() && std::all_of(members.begin(), members.end(), [](const Member* m) {
      return m->id == hash_id(m->name);
    });
  }

  std::string member(const Member& m, uint32_t& next_id, bool by_hash, const Path& from) const {
    std::string a;
    if (m.key) a += "@key ";
    if (!by_hash && m.id != next_id)
      a += m.id == hash_id(m.name) ? "@hashid " : "@id(" + std::to_string(m.id) + ") ";
    next_id = m.id + 1;
    if (m.optional) a += "@optional ";
    if (m.must_understand) a += "@must_understand ";
    if (m.external) a += "@external ";
    if (m.default_value) a += "@default(" + literal(*m.default_value, *m.type, from) + ") ";
    if (m.min) a += "@min(" + literal(*m.min, *m.type, from) + ") ";
    if (m.max) a += "@max(" + literal(*m.max, *m.type, from) + ") ";
    return a + declarator(*m.type, m.name, from) + ";\n";
  }

  static std::string aggregate_annotations(const Type& t, bool by_hash) {
    std::string a;
    if (t.extensibility_explicit) {
      a += t.extensibility == Extensibility::Final        ? "@final "
           : t.extensibility == Extensibility::Appendable ? "@appendable "
                                                          : "@mutable ";
    }
    if (t.nested) a += "@nested ";
    if (t.representations == cdr::kXcdr1Bit) a += "@data_representation(XCDR1) ";
    if (t.representations == cdr::kXcdr2Bit) a += "@data_representation(XCDR2) ";
    if (by_hash) a += "@autoid(HASH) ";
    return a;
  }

  std::string declaration(const Type& t, const std::string& name, const Path& from) const {
    const std::string in = indent(from.size());
    const std::string in2 = indent(from.size() + 1);
    std::string annotations;  // each followed by a space
    std::string head;
    std::string body;
    switch (t.kind) {
      case TypeKind::Struct: {
        std::vector<const Member*> own;
        for (const auto& m : t.members)
          own.push_back(&m);
        const bool by_hash = hashed(own);
        uint32_t next = 0;
        if (t.base != nullptr) {
          const auto inherited = all_members(*t.base);
          if (!inherited.empty()) next = inherited.back()->id + 1;
        }
        annotations = aggregate_annotations(t, by_hash);
        head = "struct " + identifier(name) +
               (t.base != nullptr ? " : " + refer(*t.base, from) : "") + " {\n";
        for (const Member* m : own)
          body += in2 + member(*m, next, by_hash, from);
        break;
      }
      case TypeKind::Union: {
        std::vector<const Member*> own;
        for (const auto& c : t.cases)
          own.push_back(&c.member);
        const bool by_hash = hashed(own);
        uint32_t next = 1;
        annotations = aggregate_annotations(t, by_hash);
        head = "union " + identifier(name) + " switch (" + spec(*t.discriminator, from) + ") {\n";
        for (const auto& c : t.cases) {
          if (c.labels.empty() && !c.is_default)
            throw std::invalid_argument("union '" + t.name + "': case '" + c.member.name +
                                        "' has no label");
          for (const int64_t l : c.labels)
            body += in2 + "case " + label(l, *t.discriminator, from) + ":\n";
          if (c.is_default) body += in2 + "default:\n";
          body += in2 + "  " + member(c.member, next, by_hash, from);
        }
        break;
      }
      case TypeKind::Enum: {
        if (t.bound != 32) annotations += "@bit_bound(" + std::to_string(t.bound) + ") ";
        if (t.extensibility == Extensibility::Appendable) annotations += "@appendable ";
        if (t.extensibility == Extensibility::Mutable) annotations += "@mutable ";
        head = "enum " + identifier(name) + " {\n";
        int64_t next = 0;
        for (size_t i = 0; i < t.enumerators.size(); ++i) {
          const auto& e = t.enumerators[i];
          body += in2 + (e.value != next ? "@value(" + std::to_string(e.value) + ") " : "") +
                  identifier(e.name) + (i + 1 < t.enumerators.size() ? ",\n" : "\n");
          next = int64_t{e.value} + 1;
        }
        break;
      }
      case TypeKind::Bitmask: {
        if (t.bound != 32) annotations += "@bit_bound(" + std::to_string(t.bound) + ") ";
        head = "bitmask " + identifier(name) + " {\n";
        uint32_t next = 0;
        for (size_t i = 0; i < t.flags.size(); ++i) {
          const auto& f = t.flags[i];
          body += in2 +
                  (f.position != next ? "@position(" + std::to_string(f.position) + ") " : "") +
                  identifier(f.name) + (i + 1 < t.flags.size() ? ",\n" : "\n");
          next = f.position + 1;
        }
        break;
      }
      case TypeKind::Bitset: {
        head = "bitset " + identifier(name) +
               (t.base != nullptr ? " : " + refer(*t.base, from) : "") + " {\n";
        uint32_t at = t.base != nullptr ? t.base->total_bits : 0;
        for (const auto& f : t.bitfields) {
          if (f.offset < at)
            throw std::invalid_argument("bitset '" + t.name + "': bitfield '" + f.name +
                                        "' overlaps the one before: no IDL");
          if (f.offset > at) body += in2 + "bitfield<" + std::to_string(f.offset - at) + ">;\n";
          // Unless declared otherwise, a bitfield is held in the smallest unsigned integer.
          const TypeKind implied = f.width <= 8    ? TypeKind::UInt8
                                   : f.width <= 16 ? TypeKind::UInt16
                                   : f.width <= 32 ? TypeKind::UInt32
                                                   : TypeKind::UInt64;
          body += in2 + "bitfield<" + std::to_string(f.width) +
                  (f.holder != implied ? std::string(", ") + to_string(f.holder) : "") + ">" +
                  (f.name.empty() ? "" : " " + identifier(f.name)) + ";\n";
          at = f.offset + f.width;
        }
        break;
      }
      case TypeKind::Alias:
        return in + "typedef " + declarator(*t.element, name, from) + ";\n";
      default:
        throw std::invalid_argument(std::string("a ") + to_string(t.kind) + " has no declaration");
    }
    if (!annotations.empty())
      annotations = in + annotations.substr(0, annotations.size() - 1) + "\n";
    return annotations + in + head + body + in + "};\n";
  }

  std::unordered_map<const Type*, State> state_;
  std::unordered_map<const Type*, std::vector<Edge>> edges_;
  std::deque<const Type*> pending_;
  // What the text declares, in an order IDL accepts; each with the items it needs before it.
  struct Entry {
    Item kind;
    const Type* type;
    std::vector<size_t> needs;
  };
  std::vector<Entry> items_;
  std::unordered_map<const Type*, size_t> forward_;  // its Forward item
  std::unordered_map<const Type*, size_t> defined_;  // its Define item
  std::map<std::string, std::set<std::string>> scopes_;
};

}  // namespace
}  // namespace to_idl_text

std::string to_idl(const Type& type) {
  const Type* one[] = {&type};
  return to_idl(one);
}

std::string to_idl(std::span<const Type* const> types) {
  to_idl_text::Printer p;
  for (const Type* t : types)
    if (t != nullptr) p.add_root(*t);
  return p.text();
}

}  // namespace spindle::types
