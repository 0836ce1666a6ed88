// The filter compiler (lexer, recursive-descent parser and type checks) and the evaluator.
//
//   text --lex--> tokens --parse--> Program { nodes (AND/OR/NOT tree), predicates }
//
// A predicate's operands are either a member, read through its chain of nested-object
// getters and a leaf getter fixed at compile time, or a constant (a literal, or a parameter
// parsed for the member it is compared with). Comparisons work on the value's
// representation (int64, uint64, double, string) and are exact across representations.
#include "filter/expression.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <optional>
#include <system_error>
#include <utility>

#include "core/glob.hpp"

namespace spindle::filter {

using reflect::Enumerator;
using reflect::Kind;
using reflect::Member;
using reflect::StructInfo;
using reflect::Value;

namespace {

std::string format_error(std::string_view expression, std::size_t column,
                         const std::string& reason) {
  std::string out = "filter \"";
  out.append(expression);
  out += '"';
  if (column != 0) out += ", column " + std::to_string(column);
  out += ": ";
  out += reason;
  return out;
}

}  // namespace

FilterError::FilterError(std::string_view expression, std::size_t column, const std::string& reason)
    : std::runtime_error(format_error(expression, column, reason)),
      column_(column),
      reason_(reason) {}

namespace {

constexpr unsigned kMaxParameters = 100;  // %0 .. %99
constexpr int kMaxDepth = 100;            // nested parentheses and NOTs

enum class RelOp : std::uint8_t { eq, ne, lt, le, gt, ge, like };

// How a value is held and compared.
enum class Repr : std::uint8_t { i, u, f, s };

// Which values may meet in a comparison.
enum class Family : std::uint8_t { boolean, character, number, string, enumeration, none };

Family family(Kind k) {
  switch (k) {
    case Kind::boolean:
      return Family::boolean;
    case Kind::character:
      return Family::character;
    case Kind::signed_int:
    case Kind::unsigned_int:
    case Kind::floating:
      return Family::number;
    case Kind::string:
      return Family::string;
    case Kind::enumeration:
      return Family::enumeration;
    default:
      return Family::none;
  }
}

Repr repr(Kind k) {
  switch (k) {
    case Kind::character:
    case Kind::unsigned_int:
      return Repr::u;
    case Kind::floating:
      return Repr::f;
    case Kind::string:
      return Repr::s;
    default:
      return Repr::i;  // boolean, signed_int, enumeration
  }
}

std::string kind_name(Kind k) {
  switch (k) {
    case Kind::absent:
      return "absent value";
    case Kind::boolean:
      return "boolean";
    case Kind::character:
      return "char";
    case Kind::signed_int:
      return "signed integer";
    case Kind::unsigned_int:
      return "unsigned integer";
    case Kind::floating:
      return "floating-point";
    case Kind::string:
      return "string";
    case Kind::enumeration:
      return "enum";
    case Kind::structure:
      return "struct";
    case Kind::other:
      return "sequence, array, map or union";
  }
  return "unknown kind";
}

// ---------------------------------------------------------------------------------------------
// Numbers: INTEGERVALUE (decimal or 0x hex, optional sign) and FLOATVALUE (digits with an
// optional '.' and exponent, optional sign).

bool is_digit(char c) {
  return c >= '0' && c <= '9';
}
bool is_hex(char c) {
  return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}
bool is_ident_start(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}
bool is_ident(char c) {
  return is_ident_start(c) || is_digit(c);
}
bool is_space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

// The end of the number that starts at `pos` (a digit or a sign before one), or npos when
// its form is broken (`0x`, `1e`).
std::size_t scan_number(std::string_view t, std::size_t pos) {
  std::size_t i = pos;
  if (t[i] == '+' || t[i] == '-') ++i;
  if (i + 1 < t.size() && t[i] == '0' && (t[i + 1] == 'x' || t[i + 1] == 'X')) {
    i += 2;
    const std::size_t digits = i;
    while (i < t.size() && is_hex(t[i]))
      ++i;
    return i == digits ? std::string_view::npos : i;
  }
  while (i < t.size() && is_digit(t[i]))
    ++i;
  if (i < t.size() && t[i] == '.') {
    ++i;
    while (i < t.size() && is_digit(t[i]))
      ++i;
  }
  if (i < t.size() && (t[i] == 'e' || t[i] == 'E')) {
    ++i;
    if (i < t.size() && (t[i] == '+' || t[i] == '-')) ++i;
    const std::size_t digits = i;
    while (i < t.size() && is_digit(t[i]))
      ++i;
    if (i == digits) return std::string_view::npos;
  }
  return i;
}

// Converts a whole number as scan_number() delimits it; nullopt when out of range.
std::optional<Value> convert_number(std::string_view t) {
  bool negative = false;
  if (!t.empty() && (t[0] == '+' || t[0] == '-')) {
    negative = t[0] == '-';
    t.remove_prefix(1);
  }
  const bool hex = t.size() > 2 && t[0] == '0' && (t[1] == 'x' || t[1] == 'X');
  const bool fractional = !hex && t.find_first_of(".eE") != std::string_view::npos;
  Value v;
  if (fractional) {
    double d = 0;
    const auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), d);
    if (ec != std::errc() || end != t.data() + t.size() || !std::isfinite(d)) return std::nullopt;
    v.kind = Kind::floating;
    v.f = negative ? -d : d;
    return v;
  }
  if (hex) t.remove_prefix(2);
  std::uint64_t magnitude = 0;
  const auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), magnitude, hex ? 16 : 10);
  if (ec != std::errc() || end != t.data() + t.size()) return std::nullopt;
  constexpr auto kMaxSigned = static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max());
  if (negative) {
    if (magnitude > kMaxSigned + 1) return std::nullopt;
    v.kind = Kind::signed_int;
    // -(2^63) is representable; negate in unsigned arithmetic to avoid overflow.
    v.i = static_cast<std::int64_t>(~magnitude + 1);
  } else if (magnitude <= kMaxSigned) {
    v.kind = Kind::signed_int;
    v.i = static_cast<std::int64_t>(magnitude);
  } else {
    v.kind = Kind::unsigned_int;
    v.u = magnitude;
  }
  return v;
}

bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    auto lower = [](char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c + 32) : c; };
    if (lower(a[i]) != lower(b[i])) return false;
  }
  return true;
}

std::string_view trim(std::string_view t) {
  while (!t.empty() && is_space(t.front()))
    t.remove_prefix(1);
  while (!t.empty() && is_space(t.back()))
    t.remove_suffix(1);
  return t;
}

// A character as it appears in a message.
std::string shown_char(char c) {
  const auto u = static_cast<unsigned char>(c);
  if (u >= 0x20 && u < 0x7f) return std::string(1, c);
  static constexpr char kHex[] = "0123456789abcdef";
  return std::string("\\x") + kHex[u >> 4] + kHex[u & 15];
}

std::string shown(std::string_view t) {
  std::string out;
  for (const char c : t)
    out += shown_char(c);
  return out;
}

// ---------------------------------------------------------------------------------------------
// Tokens

enum class Tok : std::uint8_t {
  end,
  path,  // identifier, or dotted path a.b.c
  number,
  string,
  param,
  lparen,
  rparen,
  comma,
  op,
  kw_and,
  kw_or,
  kw_not,
  kw_between,
  kw_true,
  kw_false,
  kw_order,
  kw_by,
};

struct Token {
  Tok kind = Tok::end;
  std::size_t column = 0;  // 1-based
  std::string_view text;   // as written
  RelOp op = RelOp::eq;    // Tok::op (LIKE is an op)
  Value number;            // Tok::number
  std::string_view str;    // Tok::string: the characters between the quotes
  unsigned param = 0;      // Tok::param
};

// ---------------------------------------------------------------------------------------------
// The compiled program

// A member read: the nested objects from the sample to the member's struct, then the leaf.
struct Access {
  std::vector<const void* (*)(const void*)> path;
  Value (*get)(const void*) = nullptr;

  [[nodiscard]] Value read(const void* sample) const {
    const void* object = sample;
    for (const auto step : path) {
      object = step(object);
      if (object == nullptr) return Value{};
    }
    return get(object);
  }
};

struct Operand {
  Access access;  // a member when access.get is set; otherwise a constant
  Value constant;
  std::string text;  // a string constant's characters (constant.s is rebuilt from it)
  Repr repr = Repr::i;
  // A parameter use: bound (and rebound by set_parameters) for the member it meets.
  int param = -1;
  std::size_t column = 0;
  Kind want = Kind::absent;
  std::span<const Enumerator> enumerators;
  std::string against;  // the member's path, for messages

  [[nodiscard]] Value load(const void* sample) const {
    if (access.get != nullptr) return access.read(sample);
    Value v = constant;
    if (repr == Repr::s) v.s = text;
    return v;
  }
};

enum class Ord : std::uint8_t { less, equal, greater, unordered };

Ord three_way(auto a, auto b) {
  return a < b ? Ord::less : (b < a ? Ord::greater : Ord::equal);
}

Ord compare_int_double(std::int64_t a, double b) {
  if (std::isnan(b)) return Ord::unordered;
  if (b >= 9223372036854775808.0) return Ord::less;     // 2^63
  if (b < -9223372036854775808.0) return Ord::greater;  // below -2^63
  const double whole = std::trunc(b);
  const auto w = static_cast<std::int64_t>(whole);  // exact: |whole| < 2^63 or == -2^63
  if (a != w) return three_way(a, w);
  return three_way(0.0, b - whole);
}

Ord compare_uint_double(std::uint64_t a, double b) {
  if (std::isnan(b)) return Ord::unordered;
  if (b < 0) return Ord::greater;
  if (b >= 18446744073709551616.0) return Ord::less;  // 2^64
  const double whole = std::trunc(b);
  const auto w = static_cast<std::uint64_t>(whole);
  if (a != w) return three_way(a, w);
  return three_way(0.0, b - whole);
}

Ord flip(Ord o) {
  return o == Ord::less ? Ord::greater : (o == Ord::greater ? Ord::less : o);
}

Ord compare(const Value& a, Repr ra, const Value& b, Repr rb) {
  switch (ra) {
    case Repr::i:
      switch (rb) {
        case Repr::i:
          return three_way(a.i, b.i);
        case Repr::u:
          return a.i < 0 ? Ord::less : three_way(static_cast<std::uint64_t>(a.i), b.u);
        case Repr::f:
          return compare_int_double(a.i, b.f);
        case Repr::s:
          return Ord::unordered;
      }
      break;
    case Repr::u:
      switch (rb) {
        case Repr::i:
          return b.i < 0 ? Ord::greater : three_way(a.u, static_cast<std::uint64_t>(b.i));
        case Repr::u:
          return three_way(a.u, b.u);
        case Repr::f:
          return compare_uint_double(a.u, b.f);
        case Repr::s:
          return Ord::unordered;
      }
      break;
    case Repr::f:
      switch (rb) {
        case Repr::i:
          return flip(compare_int_double(b.i, a.f));
        case Repr::u:
          return flip(compare_uint_double(b.u, a.f));
        case Repr::f:
          if (std::isnan(a.f) || std::isnan(b.f)) return Ord::unordered;
          return three_way(a.f, b.f);
        case Repr::s:
          return Ord::unordered;
      }
      break;
    case Repr::s:
      if (rb != Repr::s) return Ord::unordered;
      {
        const int c = a.s.compare(b.s);  // char_traits<char>: bytes as unsigned char
        return c < 0 ? Ord::less : (c > 0 ? Ord::greater : Ord::equal);
      }
  }
  return Ord::unordered;
}

bool holds(RelOp op, Ord o) {
  switch (op) {
    case RelOp::eq:
      return o == Ord::equal;
    case RelOp::ne:
      return o != Ord::equal;
    case RelOp::lt:
      return o == Ord::less;
    case RelOp::le:
      return o == Ord::less || o == Ord::equal;
    case RelOp::gt:
      return o == Ord::greater;
    case RelOp::ge:
      return o == Ord::greater || o == Ord::equal;
    case RelOp::like:
      return false;
  }
  return false;
}

// SQL LIKE: '%' any run of characters (bytes), '_' exactly one; no escape (annex B has
// none). Greedy with one backtrack point: linear in practice, O(|s| * |p|) at worst.
bool like(std::string_view s, std::string_view p) {
  return core::wildcard_match(p, s, '%', '_');
}

struct Predicate {
  RelOp op = RelOp::eq;
  bool between = false;  // a BETWEEN b AND c
  bool negated = false;  // NOT BETWEEN
  Operand a, b, c;

  [[nodiscard]] bool test(const void* sample) const {
    const Value x = a.load(sample);
    const Value y = b.load(sample);
    if (x.kind == Kind::absent || y.kind == Kind::absent) return false;
    if (op == RelOp::like) return like(x.s, y.s);
    if (!between) return holds(op, compare(x, a.repr, y, b.repr));
    const Value z = c.load(sample);
    if (z.kind == Kind::absent) return false;
    const bool inside = holds(RelOp::ge, compare(x, a.repr, y, b.repr)) &&
                        holds(RelOp::le, compare(x, a.repr, z, c.repr));
    return inside != negated;
  }
};

struct Node {
  enum class Op : std::uint8_t { all, any, negate, test };
  Op op = Op::test;
  std::uint32_t first = 0;  // test: predicate; negate: node; all/any: first child slot
  std::uint32_t count = 0;  // all/any: number of children
};

struct OrderKey {
  Access access;
  Repr repr = Repr::i;
};

}  // namespace

struct Expression::Program {
  std::string text;
  const StructInfo* type = nullptr;
  std::vector<std::string> parameters;
  std::vector<Predicate> predicates;
  std::vector<Node> nodes;
  std::vector<std::uint32_t> children;
  std::optional<std::uint32_t> root;  // none: ORDER BY only
  std::vector<std::string> order_names;
  std::vector<OrderKey> order_keys;
  bool bound = false;  // the parameters were checked and bound (bind_all)

  [[nodiscard]] bool eval(std::uint32_t n, const void* sample) const {
    const Node& node = nodes[n];
    switch (node.op) {
      case Node::Op::test:
        return predicates[node.first].test(sample);
      case Node::Op::negate:
        return !eval(node.first, sample);
      case Node::Op::all:
        for (std::uint32_t i = 0; i < node.count; ++i)
          if (!eval(children[node.first + i], sample)) return false;
        return true;
      case Node::Op::any:
        for (std::uint32_t i = 0; i < node.count; ++i)
          if (eval(children[node.first + i], sample)) return true;
        return false;
    }
    return false;
  }

  [[noreturn]] void fail(std::size_t column, const std::string& reason) const {
    throw FilterError(text, column, reason);
  }

  // Parses parameter `o.param` for the member it meets (o.want).
  void bind(Operand& o) const {
    const auto index = static_cast<std::size_t>(o.param);
    const std::string name = "%" + std::to_string(index);
    if (index >= parameters.size())
      fail(o.column, "parameter " + name + " is not given (" + std::to_string(parameters.size()) +
                         (parameters.size() == 1 ? " parameter)" : " parameters)"));
    const std::string_view raw = parameters[index];
    const std::string what = "parameter " + name + " ('" + shown(raw) + "')";
    const std::string member = "member '" + o.against + "' (" + kind_name(o.want) + ")";
    // Strings, chars and enumerators may come quoted ('abc' or `abc') or bare.
    auto unquoted = [](std::string_view t) {
      if (t.size() >= 2 && (t.front() == '\'' || t.front() == '`') && t.back() == '\'')
        return t.substr(1, t.size() - 2);
      return t;
    };
    Value v;
    switch (family(o.want)) {
      case Family::number: {
        const std::string_view t = trim(raw);
        const bool starts =
            !t.empty() &&
            (is_digit(t[0]) || ((t[0] == '+' || t[0] == '-') && t.size() > 1 && is_digit(t[1])));
        if (!starts || scan_number(t, 0) != t.size())
          fail(o.column, what + " is not a number, as " + member + " needs");
        const auto n = convert_number(t);
        if (!n) fail(o.column, what + " is out of range");
        v = *n;
        break;
      }
      case Family::boolean: {
        const std::string_view t = trim(raw);
        if (iequals(t, "TRUE")) {
          v.i = 1;
        } else if (!iequals(t, "FALSE")) {
          fail(o.column, what + " is not TRUE or FALSE, as " + member + " needs");
        }
        v.kind = Kind::boolean;
        break;
      }
      case Family::character: {
        const std::string_view t = unquoted(raw);
        if (t.size() != 1) fail(o.column, what + " is not one character, as " + member + " needs");
        v.kind = Kind::character;
        v.u = static_cast<unsigned char>(t[0]);
        break;
      }
      case Family::string:
        v.kind = Kind::string;
        o.text = std::string(unquoted(raw));
        break;
      case Family::enumeration: {
        const std::string_view t = trim(unquoted(trim(raw)));
        const auto e = std::find_if(o.enumerators.begin(), o.enumerators.end(),
                                    [&](const Enumerator& x) { return x.name == t; });
        if (e == o.enumerators.end()) fail(o.column, what + " is not an enumerator of " + member);
        v.kind = Kind::enumeration;
        v.i = e->value;
        break;
      }
      case Family::none:
        fail(o.column, what + " cannot be compared with " + member);
    }
    o.constant = v;
    o.repr = repr(v.kind);
  }

  void bind_all() {
    for (auto& p : predicates)
      for (Operand* o : {&p.a, &p.b, &p.c})
        if (o->param >= 0) bind(*o);
    bound = true;
  }
};

namespace {

using Program = Expression::Program;

class Compiler {
 public:
  Compiler(Program& program, Grammar grammar) : p_(program), grammar_(grammar) {}

  void run() {
    lex();
    if (tokens_.front().kind == Tok::end) p_.fail(1, "empty expression");
    // QueryExpression ::= [Condition] ['ORDER BY' (FieldName // ',')+]
    if (peek().kind != Tok::kw_order) p_.root = parse_or();
    if (peek().kind == Tok::kw_order) {
      parse_order_by();
      if (peek().kind != Tok::end) unexpected(peek(), "expected ',' or the end after ORDER BY");
    }
    if (peek().kind != Tok::end) {
      const Token& t = peek();
      if (t.kind == Tok::rparen) unexpected(t, "no '(' to close");
      unexpected(t, "expected AND, OR or the end");
    }
  }

 private:
  // ---- lexer --------------------------------------------------------------------------------
  void lex() {
    const std::string_view t = p_.text;
    std::size_t i = 0;
    while (true) {
      while (i < t.size() && is_space(t[i]))
        ++i;
      Token tok;
      tok.column = i + 1;
      if (i == t.size()) {
        tokens_.push_back(tok);
        return;
      }
      const std::size_t start = i;
      const char c = t[i];
      if (is_ident_start(c)) {
        while (true) {
          while (i < t.size() && is_ident(t[i]))
            ++i;
          if (i < t.size() && t[i] == '.') {
            if (i + 1 >= t.size() || !is_ident_start(t[i + 1]))
              p_.fail(i + 2, "expected a member name after '.'");
            ++i;
            continue;
          }
          break;
        }
        tok.text = t.substr(start, i - start);
        tok.kind = keyword(tok.text);
        if (tok.kind == Tok::op) tok.op = RelOp::like;
      } else if (is_digit(c) ||
                 ((c == '+' || c == '-') && i + 1 < t.size() && is_digit(t[i + 1]))) {
        i = scan_number(t, start);
        if (i == std::string_view::npos || (i < t.size() && (is_ident(t[i]) || t[i] == '.'))) {
          std::size_t e = start + 1;
          while (e < t.size() && (is_ident(t[e]) || t[e] == '.'))
            ++e;
          p_.fail(tok.column, "malformed number '" + shown(t.substr(start, e - start)) + "'");
        }
        tok.kind = Tok::number;
        tok.text = t.substr(start, i - start);
        const auto v = convert_number(tok.text);
        if (!v) p_.fail(tok.column, "number '" + std::string(tok.text) + "' is out of range");
        tok.number = *v;
      } else if (c == '\'' || c == '`') {
        // STRING: opens with a left or right quote, closes with a right quote; no newline.
        const std::size_t close = t.find_first_of("'\n", i + 1);
        if (close == std::string_view::npos || t[close] == '\n')
          p_.fail(tok.column, "unterminated string");
        tok.kind = Tok::string;
        tok.str = t.substr(i + 1, close - i - 1);
        i = close + 1;
        tok.text = t.substr(start, i - start);
      } else if (c == '%') {
        ++i;
        while (i < t.size() && is_digit(t[i]))
          ++i;
        const std::size_t digits = i - start - 1;
        if (digits == 0)
          p_.fail(tok.column, "'%' must be followed by a parameter number (%0 to %99)");
        unsigned n = 0;
        for (std::size_t k = start + 1; k < i && n < kMaxParameters; ++k)
          n = n * 10 + static_cast<unsigned>(t[k] - '0');
        if (digits > 2 || n >= kMaxParameters) p_.fail(tok.column, "parameters go from %0 to %99");
        tok.kind = Tok::param;
        tok.param = n;
        tok.text = t.substr(start, i - start);
      } else {
        tok.kind = Tok::op;
        auto two = [&](char next) { return i + 1 < t.size() && t[i + 1] == next; };
        std::size_t len = 1;
        switch (c) {
          case '(':
            tok.kind = Tok::lparen;
            break;
          case ')':
            tok.kind = Tok::rparen;
            break;
          case ',':
            tok.kind = Tok::comma;
            break;
          case '=':
            tok.op = RelOp::eq;
            break;
          case '<':
            if (two('>')) {
              tok.op = RelOp::ne;
              len = 2;
            } else if (two('=')) {
              tok.op = RelOp::le;
              len = 2;
            } else {
              tok.op = RelOp::lt;
            }
            break;
          case '>':
            if (two('=')) {
              tok.op = RelOp::ge;
              len = 2;
            } else {
              tok.op = RelOp::gt;
            }
            break;
          case '!':
            if (!two('=')) p_.fail(tok.column, "unexpected '!' (not equal is <> or !=)");
            tok.op = RelOp::ne;
            len = 2;
            break;
          case '"':
            p_.fail(tok.column, "unexpected '\"' (strings take single quotes: 'text')");
          default:
            p_.fail(tok.column, "unexpected '" + shown_char(c) + "'");
        }
        i += len;
        tok.text = t.substr(start, len);
      }
      tokens_.push_back(tok);
    }
  }

  static Tok keyword(std::string_view w) {
    static constexpr std::pair<std::string_view, Tok> kWords[] = {
        {"AND", Tok::kw_and},         {"OR", Tok::kw_or},       {"NOT", Tok::kw_not},
        {"BETWEEN", Tok::kw_between}, {"LIKE", Tok::op},        {"TRUE", Tok::kw_true},
        {"FALSE", Tok::kw_false},     {"ORDER", Tok::kw_order}, {"BY", Tok::kw_by},
    };
    for (const auto& [word, kind] : kWords)
      if (iequals(w, word)) return kind;
    return Tok::path;
  }

  // ---- parser -------------------------------------------------------------------------------
  [[nodiscard]] const Token& peek() const { return tokens_[pos_]; }
  const Token& next() {
    const Token& t = tokens_[pos_];
    if (t.kind != Tok::end) ++pos_;
    return t;
  }
  bool accept(Tok k) {
    if (peek().kind != k) return false;
    next();
    return true;
  }

  [[noreturn]] void unexpected(const Token& t, const std::string& expected) const {
    if (t.kind == Tok::end) p_.fail(t.column, "unexpected end of expression, " + expected);
    p_.fail(t.column, "unexpected '" + shown(t.text) + "', " + expected);
  }

  std::uint32_t add_node(Node n) {
    p_.nodes.push_back(n);
    return static_cast<std::uint32_t>(p_.nodes.size() - 1);
  }

  std::uint32_t group(Node::Op op, const std::vector<std::uint32_t>& kids) {
    const auto first = static_cast<std::uint32_t>(p_.children.size());
    p_.children.insert(p_.children.end(), kids.begin(), kids.end());
    return add_node({op, first, static_cast<std::uint32_t>(kids.size())});
  }

  // Condition: OR binds loosest, then AND, then NOT.
  std::uint32_t parse_or() {
    std::vector<std::uint32_t> kids{parse_and()};
    while (accept(Tok::kw_or))
      kids.push_back(parse_and());
    return kids.size() == 1 ? kids.front() : group(Node::Op::any, kids);
  }

  std::uint32_t parse_and() {
    std::vector<std::uint32_t> kids{parse_unary()};
    while (accept(Tok::kw_and))
      kids.push_back(parse_unary());
    return kids.size() == 1 ? kids.front() : group(Node::Op::all, kids);
  }

  std::uint32_t parse_unary() {
    const Token& t = peek();
    if (t.kind == Tok::kw_not || t.kind == Tok::lparen) {
      if (++depth_ > kMaxDepth)
        p_.fail(t.column, "nested too deeply (more than " + std::to_string(kMaxDepth) +
                              " parentheses and NOTs)");
      next();
      std::uint32_t n = 0;
      if (t.kind == Tok::kw_not) {
        n = add_node({Node::Op::negate, parse_unary(), 0});
      } else {
        n = parse_or();
        if (!accept(Tok::rparen))
          unexpected(peek(), "expected ')' to close the '(' at column " + std::to_string(t.column));
      }
      --depth_;
      return n;
    }
    return parse_predicate();
  }

  static bool is_operand(Tok k) {
    return k == Tok::path || k == Tok::number || k == Tok::string || k == Tok::param ||
           k == Tok::kw_true || k == Tok::kw_false;
  }

  const Token& parse_operand() {
    if (!is_operand(peek().kind)) unexpected(peek(), "expected a member, a literal or a parameter");
    return next();
  }

  std::uint32_t parse_predicate() {
    if (!is_operand(peek().kind)) unexpected(peek(), "expected a condition");
    const Token& left = next();
    Predicate pred;
    const Token& t = peek();
    if (t.kind == Tok::op) {
      next();
      const Token& right = parse_operand();
      pred.op = t.op;
      type_pair(pred.a, left, pred.b, right, t);
    } else if (t.kind == Tok::kw_between ||
               (t.kind == Tok::kw_not && tokens_[pos_ + 1].kind == Tok::kw_between)) {
      pred.negated = t.kind == Tok::kw_not;
      if (pred.negated) next();
      const Token& between = next();
      if (left.kind != Tok::path)
        p_.fail(left.column, "BETWEEN needs a member on its left, not '" + shown(left.text) + "'");
      const Token& lo = parse_operand();
      if (!accept(Tok::kw_and)) unexpected(peek(), "expected AND between the BETWEEN bounds");
      const Token& hi = parse_operand();
      pred.between = true;
      pred.op = RelOp::ge;
      Operand spare;
      type_pair(pred.a, left, pred.b, lo, between);
      type_pair(spare, left, pred.c, hi, between);
    } else if (t.kind == Tok::kw_not) {
      unexpected(tokens_[pos_ + 1], "expected BETWEEN after NOT");
    } else {
      unexpected(
          t, "expected a comparison operator, LIKE or BETWEEN after '" + shown(left.text) + "'");
    }
    p_.predicates.push_back(std::move(pred));
    return add_node({Node::Op::test, static_cast<std::uint32_t>(p_.predicates.size() - 1), 0});
  }

  void parse_order_by() {
    const Token& order = next();
    if (grammar_ != Grammar::query)
      p_.fail(order.column, "ORDER BY belongs to a query (QueryCondition), not a filter");
    if (!accept(Tok::kw_by)) unexpected(peek(), "expected BY after ORDER");
    do {
      const Token& t = peek();
      if (t.kind != Tok::path) unexpected(t, "expected a member to order by");
      next();
      const Resolved r = resolve(t);
      if (r.error) p_.fail(r.error_column, r.message);
      p_.order_names.emplace_back(t.text);
      p_.order_keys.push_back({r.access, repr(r.member->kind)});
    } while (accept(Tok::comma));
  }

  // ---- members and types --------------------------------------------------------------------
  struct Resolved {
    const Member* member = nullptr;
    Access access;
    std::string path_text;  // as written
    bool error = false;
    std::size_t error_column = 0;
    std::string message;
  };

  // Resolves a (dotted) member path to a readable member. Errors are returned, not thrown:
  // a bare identifier may still turn out to be an enumerator.
  [[nodiscard]] Resolved resolve(const Token& t) const {
    Resolved r;
    r.path_text = std::string(t.text);
    const StructInfo* s = p_.type;
    std::size_t at = 0;
    auto failed = [&](std::size_t offset, std::string message) {
      r.error = true;
      r.error_column = t.column + offset;
      r.message = std::move(message);
      return r;
    };
    while (true) {
      const std::size_t dot = t.text.find('.', at);
      const std::string_view name =
          t.text.substr(at, dot == std::string_view::npos ? std::string_view::npos : dot - at);
      const Member* m = s->find(name);
      const std::string where = at == 0
                                    ? std::string(s->name)
                                    : std::string(s->name) + " (in '" + std::string(t.text) + "')";
      if (m == nullptr) return failed(at, "no member '" + std::string(name) + "' in " + where);
      if (dot == std::string_view::npos) {
        if (m->kind == Kind::structure)
          return failed(
              at, "member '" + std::string(t.text) + "' is a struct: compare one of its members");
        if (family(m->kind) == Family::none || m->get == nullptr)
          return failed(at, "member '" + std::string(t.text) + "' is a " + kind_name(m->kind) +
                                ", which a filter cannot read");
        r.member = m;
        r.access.get = m->get;
        return r;
      }
      if (m->kind != Kind::structure || m->nested == nullptr || m->object == nullptr)
        return failed(at, "member '" + std::string(t.text.substr(0, dot)) + "' is a " +
                              kind_name(m->kind) + ", not a struct with members");
      r.access.path.push_back(m->object);
      s = &m->nested();
      at = dot + 1;
    }
  }

  static const Enumerator* find_enumerator(std::span<const Enumerator> es, std::string_view n) {
    for (const auto& e : es)
      if (e.name == n) return &e;
    return nullptr;
  }

  static std::string enumerator_list(std::span<const Enumerator> es) {
    std::string out;
    for (const auto& e : es)
      out += (out.empty() ? "" : ", ") + std::string(e.name);
    return out;
  }

  static bool same_enum(std::span<const Enumerator> a, std::span<const Enumerator> b) {
    return std::equal(a.begin(), a.end(), b.begin(), b.end(),
                      [](const Enumerator& x, const Enumerator& y) {
                        return x.name == y.name && x.value == y.value;
                      });
  }

  static bool is_simple_identifier(const Token& t) {
    return t.kind == Tok::path && t.text.find('.') == std::string_view::npos;
  }

  // Types the two operands of a comparison (or a BETWEEN's member and one bound).
  void type_pair(Operand& a, const Token& ta, Operand& b, const Token& tb, const Token& op) {
    Resolved ra;
    Resolved rb;
    if (ta.kind == Tok::path) ra = resolve(ta);
    if (tb.kind == Tok::path) rb = resolve(tb);
    // A bare identifier facing an enum member is an enumerator when it names one
    // (ENUMERATEDVALUE), even where a member has the same name.
    const bool a_enum = ta.kind == Tok::path && !ra.error && ra.member->kind == Kind::enumeration;
    const bool b_enum = tb.kind == Tok::path && !rb.error && rb.member->kind == Kind::enumeration;
    const bool a_is_enumerator =
        b_enum && is_simple_identifier(ta) && find_enumerator(rb.member->enumerators, ta.text);
    const bool b_is_enumerator =
        a_enum && is_simple_identifier(tb) && find_enumerator(ra.member->enumerators, tb.text);
    const bool a_member = ta.kind == Tok::path && !a_is_enumerator;
    const bool b_member = tb.kind == Tok::path && !b_is_enumerator;
    auto check = [&](const Token& t, const Resolved& r, bool other_enum, const Resolved& other) {
      if (!r.error) return;
      if (other_enum && is_simple_identifier(t) && r.error_column == t.column &&
          r.message.starts_with("no member"))
        p_.fail(t.column, "'" + std::string(t.text) + "' is not an enumerator of member '" +
                              member_path(other) + "' (" +
                              enumerator_list(other.member->enumerators) + ")");
      p_.fail(r.error_column, r.message);
    };
    if (a_member) check(ta, ra, b_enum, rb);
    if (b_member) check(tb, rb, a_enum, ra);
    if (!a_member && !b_member)
      p_.fail(ta.column, "'" + shown(ta.text) + "' " + shown(op.text) + " '" + shown(tb.text) +
                             "' compares no member: one side must name a member");

    if (a_member) set_member(a, ta, ra);
    if (b_member) set_member(b, tb, rb);
    const bool like_op = op.kind == Tok::op && op.op == RelOp::like;
    if (a_member && b_member) {
      const Kind ka = ra.member->kind;
      const Kind kb = rb.member->kind;
      if (like_op) {
        if (ka != Kind::string) not_string(ta, ka);
        if (kb != Kind::string) not_string(tb, kb);
      }
      if (family(ka) != family(kb) ||
          (ka == Kind::enumeration && !same_enum(ra.member->enumerators, rb.member->enumerators)))
        p_.fail(tb.column, "type mismatch: member '" + std::string(ta.text) + "' (" +
                               kind_name(ka) + ") cannot be compared with member '" +
                               std::string(tb.text) + "' (" + kind_name(kb) + ")");
      return;
    }
    const Resolved& m = a_member ? ra : rb;
    const Token& tm = a_member ? ta : tb;
    if (like_op && m.member->kind != Kind::string) not_string(tm, m.member->kind);
    set_constant(a_member ? b : a, a_member ? tb : ta, m, tm);
  }

  [[noreturn]] void not_string(const Token& t, Kind k) const {
    p_.fail(t.column,
            "LIKE needs strings, and member '" + std::string(t.text) + "' is a " + kind_name(k));
  }

  static std::string member_path(const Resolved& r) { return r.path_text; }

  void set_member(Operand& o, const Token& t, const Resolved& r) const {
    o.access = r.access;
    o.repr = repr(r.member->kind);
    o.column = t.column;
  }

  // A literal or parameter `t` compared with member `m` (written as token `tm`).
  void set_constant(Operand& o, const Token& t, const Resolved& m, const Token& tm) const {
    const Kind want = m.member->kind;
    o.column = t.column;
    if (t.kind == Tok::param) {
      o.param = static_cast<int>(t.param);
      o.want = want;
      o.enumerators = m.member->enumerators;
      o.against = std::string(tm.text);
      return;  // bound by bind_all()
    }
    auto mismatch = [&](const std::string& what) {
      p_.fail(t.column, "type mismatch: member '" + std::string(tm.text) + "' (" + kind_name(want) +
                            ") cannot be compared with " + what);
    };
    const std::string literal = "'" + shown(t.text) + "'";
    Value v;
    switch (family(want)) {
      case Family::number:
        if (t.kind != Tok::number) mismatch(describe(t));
        v = t.number;
        break;
      case Family::boolean:
        if (t.kind != Tok::kw_true && t.kind != Tok::kw_false) mismatch(describe(t));
        v.kind = Kind::boolean;
        v.i = t.kind == Tok::kw_true ? 1 : 0;
        break;
      case Family::character:
        if (t.kind != Tok::string) mismatch(describe(t));
        if (t.str.size() != 1)
          p_.fail(t.column, "member '" + std::string(tm.text) +
                                "' is a char: compare it with one character in quotes, not " +
                                literal);
        v.kind = Kind::character;
        v.u = static_cast<unsigned char>(t.str[0]);
        break;
      case Family::string:
        if (t.kind != Tok::string) mismatch(describe(t));
        v.kind = Kind::string;
        o.text = std::string(t.str);
        break;
      case Family::enumeration: {
        if (t.kind != Tok::string && t.kind != Tok::path) mismatch(describe(t));
        const std::string_view name = t.kind == Tok::string ? t.str : t.text;
        const Enumerator* e = find_enumerator(m.member->enumerators, name);
        if (e == nullptr)
          p_.fail(t.column, "'" + shown(name) + "' is not an enumerator of member '" +
                                std::string(tm.text) + "' (" +
                                enumerator_list(m.member->enumerators) + ")");
        v.kind = Kind::enumeration;
        v.i = e->value;
        break;
      }
      case Family::none:
        mismatch(describe(t));
    }
    o.constant = v;
    o.repr = repr(v.kind);
  }

  static std::string describe(const Token& t) {
    switch (t.kind) {
      case Tok::number:
        return (t.number.kind == Kind::floating ? "the number " : "the integer ") +
               std::string(t.text);
      case Tok::string:
        return "the string " + shown(t.text);
      case Tok::kw_true:
      case Tok::kw_false:
        return "the boolean " + std::string(t.text);
      default:
        return "'" + shown(t.text) + "'";
    }
  }

  Program& p_;
  Grammar grammar_;
  std::vector<Token> tokens_;
  std::size_t pos_ = 0;
  int depth_ = 0;
};

}  // namespace

Expression Expression::compile(std::string_view expression, const StructInfo& type,
                               std::span<const std::string> parameters, Grammar grammar,
                               Binding binding) {
  auto program = std::make_shared<Program>();
  program->text = std::string(expression);
  program->type = &type;
  program->parameters.assign(parameters.begin(), parameters.end());
  Compiler(*program, grammar).run();
  if (binding == Binding::now) program->bind_all();
  return Expression(std::move(program));
}

bool Expression::matches(const void* sample) const {
  const Program& p = *program_;
  return !p.root || p.eval(*p.root, sample);
}

void Expression::set_parameters(std::span<const std::string> parameters, Binding binding) {
  auto program = std::make_shared<Program>(*program_);
  program->parameters.assign(parameters.begin(), parameters.end());
  program->bound = false;
  if (binding == Binding::now) program->bind_all();
  program_ = std::move(program);
}

void Expression::bind() {
  if (program_->bound) return;
  auto program = std::make_shared<Program>(*program_);
  program->bind_all();
  program_ = std::move(program);
}

bool Expression::bound() const noexcept {
  return program_->bound;
}

const std::string& Expression::expression() const noexcept {
  return program_->text;
}

std::span<const std::string> Expression::parameters() const noexcept {
  return program_->parameters;
}

const StructInfo& Expression::type() const noexcept {
  return *program_->type;
}

std::span<const std::string> Expression::order_by() const noexcept {
  return program_->order_names;
}

std::weak_ordering Expression::order(const void* a, const void* b) const {
  for (const auto& key : program_->order_keys) {
    const Value x = key.access.read(a);
    const Value y = key.access.read(b);
    const bool xa = x.kind == Kind::absent;
    const bool ya = y.kind == Kind::absent;
    if (xa || ya) {
      if (xa && ya) continue;
      return xa ? std::weak_ordering::less : std::weak_ordering::greater;
    }
    if (key.repr == Repr::f) {
      const bool xn = std::isnan(x.f);
      const bool yn = std::isnan(y.f);
      if (xn || yn) {
        if (xn && yn) continue;
        return xn ? std::weak_ordering::greater : std::weak_ordering::less;
      }
    }
    switch (compare(x, key.repr, y, key.repr)) {
      case Ord::less:
        return std::weak_ordering::less;
      case Ord::greater:
        return std::weak_ordering::greater;
      default:
        break;
    }
  }
  return std::weak_ordering::equivalent;
}

}  // namespace spindle::filter
