// The idlc preprocessor (see preprocessor.hpp).
#include "preprocessor.hpp"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <sstream>

namespace spindle::idlc::detail {

namespace {

constexpr int kMaxIncludeDepth = 64;
constexpr size_t kMaxExpansion = size_t{4} << 20;  // bytes macros may produce, in total
constexpr size_t kMaxOutput = size_t{256} << 20;   // bytes of preprocessed text
constexpr size_t kMaxFileSize = size_t{64} << 20;  // refuse absurd include files
constexpr int kMaxIfNesting = 200;                 // recursion bound of #if expressions

bool is_ident_start(char c) {
  return std::isalpha(static_cast<unsigned char>(c)) != 0 || c == '_';
}
bool is_ident_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_';
}
bool is_space(char c) {
  return c == ' ' || c == '\t' || c == '\f' || c == '\v' || c == '\r';
}

uint32_t u32(size_t v) {
  return v > std::numeric_limits<uint32_t>::max() ? std::numeric_limits<uint32_t>::max()
                                                  : static_cast<uint32_t>(v);
}

// Returns the byte offset of the first invalid UTF-8 sequence, or npos.
size_t find_invalid_utf8(std::string_view s) {
  size_t i = 0;
  while (i < s.size()) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) {
      ++i;
      continue;
    }
    size_t len = 0;
    uint32_t cp = 0;
    if ((c & 0xE0) == 0xC0) {
      len = 2;
      cp = c & 0x1Fu;
    } else if ((c & 0xF0) == 0xE0) {
      len = 3;
      cp = c & 0x0Fu;
    } else if ((c & 0xF8) == 0xF0) {
      len = 4;
      cp = c & 0x07u;
    } else {
      return i;
    }
    if (i + len > s.size()) {
      return i;
    }
    for (size_t k = 1; k < len; ++k) {
      const auto cc = static_cast<unsigned char>(s[i + k]);
      if ((cc & 0xC0) != 0x80) {
        return i;
      }
      cp = (cp << 6) | (cc & 0x3Fu);
    }
    const bool overlong =
        (len == 2 && cp < 0x80) || (len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000);
    if (overlong || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) {
      return i;
    }
    i += len;
  }
  return std::string_view::npos;
}

struct Cond {
  bool active = false;  // this branch is being emitted (includes the parents' state)
  bool taken = false;   // some branch of this #if group was taken
  bool seen_else = false;
  bool parent_active = false;
  SourceLocation loc;
  std::string directive;  // "if", "ifdef", "ifndef"
};

class Preprocessor {
 public:
  Preprocessor(const FrontendOptions& options, Diagnostics& diags, PreprocessResult& out)
      : options_(options), diags_(diags), out_(out) {
    for (const auto& [name, value] : options.defines) {
      macros_[name] = value.empty() ? std::string("1") : value;
    }
  }

  void run(std::string_view text, const std::string& name) {
    out_.source_files.push_back(name);
    process(text, name, 0);
  }

  [[nodiscard]] bool ok() const { return !failed_; }

 private:
  // One source line after comment removal.
  struct CleanLine {
    std::string text;
  };

  void error(const SourceLocation& loc, std::string msg) {
    failed_ = true;
    diags_.error(loc, std::move(msg));
  }

  // Reported once: every later line would fail the same way.
  void expansion_overflow(const SourceLocation& where) {
    if (!expansion_reported_) {
      expansion_reported_ = true;
      error(where, "macro expansion too large (more than 4 MiB)");
    }
  }

  uint32_t file_index(const std::string& name) {
    out_.map.files.push_back(std::make_shared<const std::string>(name));
    return u32(out_.map.files.size() - 1);
  }

  SourceLocation loc(uint32_t file, size_t line, size_t col0) const {
    return SourceLocation{out_.map.files[file], u32(line), u32(col0 + 1)};
  }

  void emit(const std::string& text, uint32_t file, size_t line,
            std::vector<LineOrigin::Segment> segs) {
    out_.map.line_starts.push_back(out_.text.size());
    out_.text += text;
    out_.text += '\n';
    if (segs.empty()) {
      segs.push_back({0, 0, false});
    }
    out_.map.lines.push_back(LineOrigin{file, u32(line), std::move(segs)});
  }

  // Replaces comments by spaces (so columns stay put), tracking block comments across lines.
  std::string strip_comments(std::string_view line, uint32_t file, size_t lineno) {
    std::string out(line);
    size_t i = 0;
    char quote = 0;
    while (i < out.size()) {
      if (in_comment_) {
        if (out[i] == '*' && i + 1 < out.size() && out[i + 1] == '/') {
          out[i] = ' ';
          out[i + 1] = ' ';
          i += 2;
          in_comment_ = false;
        } else {
          out[i++] = ' ';
        }
        continue;
      }
      const char c = out[i];
      if (quote != 0) {
        if (c == '\\' && i + 1 < out.size()) {
          i += 2;
        } else {
          if (c == quote) {
            quote = 0;
          }
          ++i;
        }
        continue;
      }
      if (c == '"' || c == '\'') {
        quote = c;
        ++i;
      } else if (c == '/' && i + 1 < out.size() && out[i + 1] == '/') {
        std::fill(out.begin() + static_cast<std::ptrdiff_t>(i), out.end(), ' ');
        break;
      } else if (c == '/' && i + 1 < out.size() && out[i + 1] == '*') {
        in_comment_ = true;
        comment_start_ = loc(file, lineno, i);
        out[i] = ' ';
        out[i + 1] = ' ';
        i += 2;
      } else {
        ++i;
      }
    }
    return out;
  }

  // Expands object-like macros in `text` (identifiers outside literals), never expanding a
  // macro inside its own expansion. Segments describe the column mapping when wanted.
  bool expand(std::string_view text, std::set<std::string>& active, std::string& out,
              std::vector<LineOrigin::Segment>* segs) {
    size_t i = 0;
    while (i < text.size()) {
      if (expanded_bytes_ > kMaxExpansion) {
        return false;
      }
      const char c = text[i];
      if (c == '"' || c == '\'') {
        const size_t start = i++;
        while (i < text.size() && text[i] != c) {
          i += (text[i] == '\\' && i + 1 < text.size()) ? size_t{2} : size_t{1};
        }
        i = std::min(text.size(), i + 1);
        out.append(text.substr(start, i - start));
      } else if (std::isdigit(static_cast<unsigned char>(c)) != 0 ||
                 (c == '.' && i + 1 < text.size() &&
                  std::isdigit(static_cast<unsigned char>(text[i + 1])) != 0)) {
        const size_t start = i++;
        while (i < text.size() && (is_ident_char(text[i]) || text[i] == '.')) {
          ++i;
        }
        out.append(text.substr(start, i - start));
      } else if (is_ident_start(c)) {
        const size_t start = i;
        while (i < text.size() && is_ident_char(text[i])) {
          ++i;
        }
        const std::string name(text.substr(start, i - start));
        auto it = macros_.find(name);
        if (it == macros_.end() || active.count(name) != 0 ||
            (name == "L" && i < text.size() && (text[i] == '"' || text[i] == '\''))) {
          out += name;
          continue;
        }
        const size_t out_start = out.size();
        active.insert(name);
        const std::string value = it->second;  // the map may not change, but be safe
        const bool fine = expand(value, active, out, nullptr);
        active.erase(name);
        expanded_bytes_ += out.size() - out_start;
        if (!fine) {
          return false;
        }
        if (segs != nullptr) {
          segs->push_back({u32(out_start), u32(start), true});
          segs->push_back({u32(out.size()), u32(i), false});
        }
      } else {
        out += c;
        ++i;
      }
    }
    return true;
  }

  // ------------------------------------------------------------------ #if expressions
  struct IfParser {
    const std::string& s;
    size_t pos = 0;
    bool bad = false;
    int depth = 0;

    void skip() {
      while (pos < s.size() && (is_space(s[pos]) || s[pos] == '\n')) {
        ++pos;
      }
    }
    bool eat(std::string_view op) {
      skip();
      if (s.compare(pos, op.size(), op) == 0) {
        // Do not split "<<" as "<", "&&" as "&", "||" as "|", "<=" as "<".
        if (op.size() == 1 && pos + 1 < s.size()) {
          const char n = s[pos + 1];
          if ((op == "<" && (n == '<' || n == '=')) || (op == ">" && (n == '>' || n == '=')) ||
              (op == "&" && n == '&') || (op == "|" && n == '|') || (op == "!" && n == '=') ||
              (op == "=" && n == '=')) {
            return false;
          }
        }
        pos += op.size();
        return true;
      }
      return false;
    }
    uint64_t primary() {
      skip();
      if (++depth > kMaxIfNesting) {
        bad = true;
        return 0;
      }
      uint64_t v = 0;
      if (eat("(")) {
        v = ternary();
        if (!eat(")")) {
          bad = true;
        }
      } else if (eat("!")) {
        v = primary() == 0 ? 1 : 0;
      } else if (eat("~")) {
        v = ~primary();
      } else if (eat("-")) {
        v = 0 - primary();
      } else if (eat("+")) {
        v = primary();
      } else if (pos < s.size() && std::isdigit(static_cast<unsigned char>(s[pos])) != 0) {
        const size_t start = pos;
        while (pos < s.size() && std::isxdigit(static_cast<unsigned char>(s[pos])) != 0) {
          ++pos;
        }
        if (pos < s.size() && (s[pos] == 'x' || s[pos] == 'X')) {
          ++pos;
          while (pos < s.size() && std::isxdigit(static_cast<unsigned char>(s[pos])) != 0) {
            ++pos;
          }
        }
        const std::string digits = s.substr(start, pos - start);
        while (pos < s.size() &&
               (s[pos] == 'u' || s[pos] == 'U' || s[pos] == 'l' || s[pos] == 'L')) {
          ++pos;
        }
        errno = 0;
        char* end = nullptr;
        v = std::strtoull(digits.c_str(), &end, 0);
        if (errno != 0 || end == nullptr || *end != '\0') {
          bad = true;
        }
      } else if (pos < s.size() && is_ident_start(s[pos])) {
        while (pos < s.size() && is_ident_char(s[pos])) {
          ++pos;  // an identifier left after expansion is 0
        }
      } else {
        bad = true;
      }
      --depth;
      return v;
    }
    uint64_t mul() {
      uint64_t v = primary();
      while (!bad) {
        if (eat("*")) {
          v *= primary();
        } else if (eat("/") || eat("%")) {
          const bool div = s[pos - 1] == '/';
          const uint64_t r = primary();
          if (r == 0) {
            bad = true;
            return 0;
          }
          const auto a = static_cast<int64_t>(v);
          const auto b = static_cast<int64_t>(r);
          if (b == -1) {
            v = div ? 0 - v : 0;
          } else {
            v = static_cast<uint64_t>(div ? a / b : a % b);
          }
        } else {
          break;
        }
      }
      return v;
    }
    uint64_t add() {
      uint64_t v = mul();
      while (!bad) {
        if (eat("+")) {
          v += mul();
        } else if (eat("-")) {
          v -= mul();
        } else {
          break;
        }
      }
      return v;
    }
    uint64_t shift() {
      uint64_t v = add();
      while (!bad) {
        if (eat("<<")) {
          v <<= (add() & 63u);
        } else if (eat(">>")) {
          v = static_cast<uint64_t>(static_cast<int64_t>(v) >> (add() & 63u));
        } else {
          break;
        }
      }
      return v;
    }
    uint64_t rel() {
      uint64_t v = shift();
      while (!bad) {
        const auto a = static_cast<int64_t>(v);
        if (eat("<=")) {
          v = a <= static_cast<int64_t>(shift()) ? 1 : 0;
        } else if (eat(">=")) {
          v = a >= static_cast<int64_t>(shift()) ? 1 : 0;
        } else if (eat("<")) {
          v = a < static_cast<int64_t>(shift()) ? 1 : 0;
        } else if (eat(">")) {
          v = a > static_cast<int64_t>(shift()) ? 1 : 0;
        } else {
          break;
        }
      }
      return v;
    }
    uint64_t eq() {
      uint64_t v = rel();
      while (!bad) {
        if (eat("==")) {
          v = v == rel() ? 1 : 0;
        } else if (eat("!=")) {
          v = v != rel() ? 1 : 0;
        } else {
          break;
        }
      }
      return v;
    }
    uint64_t bitand_() {
      uint64_t v = eq();
      while (!bad && eat("&")) {
        v &= eq();
      }
      return v;
    }
    uint64_t bitxor() {
      uint64_t v = bitand_();
      while (!bad && eat("^")) {
        v ^= bitand_();
      }
      return v;
    }
    uint64_t bitor_() {
      uint64_t v = bitxor();
      while (!bad && eat("|")) {
        v |= bitxor();
      }
      return v;
    }
    uint64_t land() {
      uint64_t v = bitor_();
      while (!bad && eat("&&")) {
        const uint64_t r = bitor_();
        v = (v != 0 && r != 0) ? 1 : 0;
      }
      return v;
    }
    uint64_t lor() {
      uint64_t v = land();
      while (!bad && eat("||")) {
        const uint64_t r = land();
        v = (v != 0 || r != 0) ? 1 : 0;
      }
      return v;
    }
    uint64_t ternary() {
      if (++depth > kMaxIfNesting) {
        bad = true;
        return 0;
      }
      uint64_t v = lor();
      if (!bad && eat("?")) {
        const uint64_t a = ternary();
        if (!eat(":")) {
          bad = true;
        }
        const uint64_t b = ternary();
        v = v != 0 ? a : b;
      }
      --depth;
      return v;
    }
  };

  // Evaluates the text of an #if/#elif; nullopt (after reporting) when malformed.
  std::optional<bool> eval_if(const std::string& expr, const SourceLocation& where) {
    // Replace `defined X` / `defined(X)` before macro expansion.
    std::string pre;
    size_t i = 0;
    while (i < expr.size()) {
      if (is_ident_start(expr[i])) {
        const size_t start = i;
        while (i < expr.size() && is_ident_char(expr[i])) {
          ++i;
        }
        const std::string word = expr.substr(start, i - start);
        if (word != "defined") {
          pre += word;
          continue;
        }
        size_t j = i;
        while (j < expr.size() && is_space(expr[j])) {
          ++j;
        }
        const bool paren = j < expr.size() && expr[j] == '(';
        if (paren) {
          ++j;
          while (j < expr.size() && is_space(expr[j])) {
            ++j;
          }
        }
        const size_t name_start = j;
        while (j < expr.size() && is_ident_char(expr[j])) {
          ++j;
        }
        const std::string name = expr.substr(name_start, j - name_start);
        if (paren) {
          while (j < expr.size() && is_space(expr[j])) {
            ++j;
          }
          if (j >= expr.size() || expr[j] != ')') {
            error(where, "missing ')' after 'defined'");
            return std::nullopt;
          }
          ++j;
        }
        if (name.empty() || !is_ident_start(name[0])) {
          error(where, "macro name missing after 'defined'");
          return std::nullopt;
        }
        pre += macros_.count(name) != 0 ? " 1 " : " 0 ";
        i = j;
      } else {
        pre += expr[i++];
      }
    }
    std::string expanded;
    std::set<std::string> active;
    if (!expand(pre, active, expanded, nullptr)) {
      expansion_overflow(where);
      return std::nullopt;
    }
    IfParser p{expanded};
    p.skip();
    if (p.pos >= expanded.size()) {
      error(where, "#if with no expression");
      return std::nullopt;
    }
    const uint64_t v = p.ternary();
    p.skip();
    if (p.bad || p.pos != expanded.size()) {
      error(where, "invalid expression in preprocessor conditional");
      return std::nullopt;
    }
    return v != 0;
  }

  // ------------------------------------------------------------------ includes
  std::optional<std::filesystem::path> find_include(const std::string& spelled,
                                                    const std::filesystem::path& dir) {
    namespace fs = std::filesystem;
    std::vector<fs::path> candidates;
    const fs::path p(spelled);
    if (p.is_absolute()) {
      candidates.push_back(p);
    } else {
      candidates.push_back(dir.empty() ? p : dir / p);
      for (const auto& inc : options_.include_dirs) {
        candidates.push_back(fs::path(inc) / p);
      }
    }
    for (const auto& c : candidates) {
      std::error_code ec;
      if (fs::is_regular_file(c, ec)) {
        return c.lexically_normal();
      }
    }
    return std::nullopt;
  }

  void include(const std::string& spelled, const SourceLocation& where,
               const std::filesystem::path& dir, int depth) {
    namespace fs = std::filesystem;
    if (depth + 1 > kMaxIncludeDepth) {
      error(where,
            "#include nested more than " + std::to_string(kMaxIncludeDepth) + " levels deep");
      return;
    }
    auto found = find_include(spelled, dir);
    if (!found) {
      error(where, "include file '" + spelled + "' not found");
      return;
    }
    std::error_code ec;
    const std::string canon = fs::weakly_canonical(*found, ec).string();
    if (once_.count(canon) != 0) {
      return;
    }
    const auto size = fs::file_size(*found, ec);
    if (ec || size > kMaxFileSize) {
      error(where, "cannot read include file '" + spelled + "'");
      return;
    }
    std::ifstream in(*found, std::ios::binary);
    std::ostringstream buf;
    buf << in.rdbuf();
    if (!in) {
      error(where, "cannot read include file '" + spelled + "'");
      return;
    }
    const std::string name = found->string();
    if (std::find(out_.source_files.begin(), out_.source_files.end(), name) ==
        out_.source_files.end()) {
      out_.source_files.push_back(name);
    }
    const std::string text = buf.str();
    process(text, name, depth + 1);
  }

  // ------------------------------------------------------------------ one file
  void process(std::string_view original, const std::string& name, int depth) {
    namespace fs = std::filesystem;
    // A UTF-8 byte order mark becomes three spaces, so byte columns stay exact.
    std::string without_bom;
    std::string_view text = original;
    if (text.substr(0, 3) == "\xEF\xBB\xBF") {
      without_bom = "   ";
      without_bom += text.substr(3);
      text = without_bom;
    }
    const uint32_t file = file_index(name);
    const fs::path dir = fs::path(name).parent_path();
    std::vector<Cond> conds;
    in_comment_ = false;
    const auto active = [&conds] { return conds.empty() || conds.back().active; };

    if (const size_t bad = find_invalid_utf8(text); bad != std::string_view::npos) {
      size_t line = 1;
      size_t line_start = 0;
      for (size_t k = 0; k < bad; ++k) {
        if (text[k] == '\n') {
          ++line;
          line_start = k + 1;
        }
      }
      error(loc(file, line, bad - line_start), "invalid UTF-8 in source file");
      return;
    }

    size_t lineno = 0;
    size_t pos = 0;
    size_t continued = 0;  // lines a directive took through backslash-newline
    const auto next_raw = [&text, &pos]() {
      size_t eol = text.find('\n', pos);
      if (eol == std::string_view::npos) {
        eol = text.size();
      }
      std::string_view raw = text.substr(pos, eol - pos);
      pos = eol + 1;
      if (!raw.empty() && raw.back() == '\r') {
        raw.remove_suffix(1);
      }
      return raw;
    };
    while (pos < text.size()) {
      lineno += continued + 1;
      continued = 0;
      std::string line = strip_comments(next_raw(), file, lineno);
      if (out_.text.size() > kMaxOutput) {
        if (!too_large_) {
          error(loc(file, lineno, 0), "preprocessed source exceeds 256 MiB");
          too_large_ = true;
        }
        return;
      }

      size_t k = 0;
      while (k < line.size() && is_space(line[k])) {
        ++k;
      }
      if (k >= line.size() || line[k] != '#') {
        if (!active()) {
          emit("", file, lineno, {});
          continue;
        }
        std::string expanded;
        std::vector<LineOrigin::Segment> segs{{0, 0, false}};
        std::set<std::string> busy;
        if (!expand(line, busy, expanded, &segs)) {
          expansion_overflow(loc(file, lineno, 0));
          emit("", file, lineno, {});
          continue;
        }
        emit(expanded, file, lineno, std::move(segs));
        continue;
      }

      // A directive; a backslash at the end of the line continues it on the next one. The
      // lines taken become blank output lines (they hold no tokens, their order is moot).
      while (!line.empty() && line.back() == '\\' && pos < text.size()) {
        line.pop_back();
        ++continued;
        line += strip_comments(next_raw(), file, lineno + continued);
        emit("", file, lineno + continued, {});
      }
      const SourceLocation hash_loc = loc(file, lineno, k);
      size_t d = k + 1;
      while (d < line.size() && is_space(line[d])) {
        ++d;
      }
      const size_t dname_start = d;
      while (d < line.size() && is_ident_char(line[d])) {
        ++d;
      }
      const std::string directive = line.substr(dname_start, d - dname_start);
      while (d < line.size() && is_space(line[d])) {
        ++d;
      }
      const size_t rest_col = d;
      std::string rest = line.substr(d);
      while (!rest.empty() && is_space(rest.back())) {
        rest.pop_back();
      }
      const auto first_word = [&rest]() {
        size_t e = 0;
        while (e < rest.size() && is_ident_char(rest[e])) {
          ++e;
        }
        return rest.substr(0, e);
      };

      if (directive == "ifdef" || directive == "ifndef" || directive == "if") {
        Cond c;
        c.parent_active = active();
        c.loc = hash_loc;
        c.directive = directive;
        if (conds.size() >= 4096) {
          error(hash_loc, "#if nested too deeply");
          emit("", file, lineno, {});
          continue;
        }
        bool value = false;
        if (c.parent_active) {
          if (directive == "if") {
            value = eval_if(rest, loc(file, lineno, rest_col)).value_or(false);
          } else {
            const std::string w = first_word();
            if (w.empty() || !is_ident_start(w[0])) {
              error(loc(file, lineno, rest_col), "macro name missing after #" + directive);
            }
            value = (macros_.count(w) != 0) == (directive == "ifdef");
          }
        }
        c.active = c.parent_active && value;
        c.taken = c.active;
        conds.push_back(std::move(c));
      } else if (directive == "elif") {
        if (conds.empty()) {
          error(hash_loc, "#elif without #if");
        } else {
          Cond& c = conds.back();
          if (c.seen_else) {
            error(hash_loc, "#elif after #else");
          }
          bool value = false;
          if (c.parent_active && !c.taken) {
            value = eval_if(rest, loc(file, lineno, rest_col)).value_or(false);
          }
          c.active = c.parent_active && !c.taken && value;
          c.taken = c.taken || c.active;
        }
      } else if (directive == "else") {
        if (conds.empty()) {
          error(hash_loc, "#else without #if");
        } else {
          Cond& c = conds.back();
          if (c.seen_else) {
            error(hash_loc, "#else after #else");
          }
          c.seen_else = true;
          c.active = c.parent_active && !c.taken;
          c.taken = true;
        }
      } else if (directive == "endif") {
        if (conds.empty()) {
          error(hash_loc, "#endif without #if");
        } else {
          conds.pop_back();
        }
      } else if (!active()) {
        // Other directives in a skipped block are not even looked at.
      } else if (directive == "define") {
        const std::string w = first_word();
        if (w.empty()) {
          error(loc(file, lineno, rest_col), "macro name missing after #define");
        } else if (!is_ident_start(w[0])) {
          error(loc(file, lineno, rest_col), "macro names must be identifiers");
        } else if (w == "defined") {
          error(loc(file, lineno, rest_col), "'defined' cannot be used as a macro name");
        } else if (w.size() < rest.size() && rest[w.size()] == '(') {
          error(loc(file, lineno, rest_col + w.size()), "function-like macros are not supported");
        } else {
          size_t v = w.size();
          while (v < rest.size() && is_space(rest[v])) {
            ++v;
          }
          std::string value = rest.substr(v);
          auto it = macros_.find(w);
          if (it != macros_.end() && it->second != value) {
            diags_.warning(loc(file, lineno, rest_col), "'" + w + "' macro redefined");
          }
          macros_[w] = std::move(value);
        }
      } else if (directive == "undef") {
        const std::string w = first_word();
        if (w.empty() || !is_ident_start(w[0])) {
          error(loc(file, lineno, rest_col), "macro name missing after #undef");
        } else {
          macros_.erase(w);
        }
      } else if (directive == "include") {
        std::string spec = rest;
        if (!spec.empty() && is_ident_start(spec[0])) {
          std::string expanded;
          std::set<std::string> busy;
          if (expand(spec, busy, expanded, nullptr)) {
            spec = expanded;
          }
        }
        std::string spelled;
        bool good = false;
        if (spec.size() >= 2 && (spec[0] == '"' || spec[0] == '<')) {
          const char close = spec[0] == '"' ? '"' : '>';
          const size_t end = spec.find(close, 1);
          if (end != std::string::npos) {
            spelled = spec.substr(1, end - 1);
            size_t t = end + 1;
            while (t < spec.size() && is_space(spec[t])) {
              ++t;
            }
            good = !spelled.empty() && t == spec.size();
          }
        }
        const SourceLocation where = loc(file, lineno, rest_col);
        if (!good) {
          error(where, "#include expects \"FILENAME\" or <FILENAME>");
        } else {
          if (depth == 0) {
            out_.direct_includes.push_back(spelled);
          }
          emit("", file, lineno, {});
          const bool saved_comment = in_comment_;
          include(spelled, where, dir, depth);
          in_comment_ = saved_comment;
          continue;
        }
      } else if (directive == "pragma") {
        const std::string w = first_word();
        if (w == "once") {
          std::error_code ec;
          once_.insert(fs::weakly_canonical(fs::path(name), ec).string());
        } else if (w == "keylist") {
          emit(line, file, lineno, {});
          continue;
        }
        // Other pragmas are for other compilers; ignore them as cpp does.
      } else if (directive == "error") {
        error(hash_loc, "#error " + rest);
      } else if (directive == "warning") {
        diags_.warning(hash_loc, "#warning " + rest);
      } else if (directive == "line" || directive.empty()) {
        // `#line` only affects positions we keep ourselves; a lone `#` is a null directive.
      } else {
        error(hash_loc, "invalid preprocessing directive #" + directive);
      }
      emit("", file, lineno, {});
    }
    if (in_comment_) {
      error(comment_start_, "unterminated comment");
      in_comment_ = false;
    }
    for (const auto& c : conds) {
      error(c.loc, "unterminated #" + c.directive);
    }
  }

  const FrontendOptions& options_;
  Diagnostics& diags_;
  PreprocessResult& out_;
  std::map<std::string, std::string> macros_;
  std::set<std::string> once_;
  bool in_comment_ = false;
  SourceLocation comment_start_;
  bool failed_ = false;
  bool too_large_ = false;
  size_t expanded_bytes_ = 0;
  bool expansion_reported_ = false;
};

}  // namespace

SourceLocation SourceMap::location(size_t line, size_t column_cp) const {
  if (lines.empty()) {
    return SourceLocation{files.empty() ? nullptr : files[0], 1, 1};
  }
  if (line == 0) {
    line = 1;
  }
  if (line > lines.size()) {
    // EOF: point just past the last character of the last line.
    const LineOrigin& last = lines.back();
    const size_t start = line_starts.back();
    const size_t len = text->size() - start - 1;
    const auto& seg = last.segments.back();
    const size_t col = seg.clamp ? seg.orig : seg.orig + (len - std::min<size_t>(len, seg.out));
    return SourceLocation{files[last.file], last.line, u32(col + 1)};
  }
  const LineOrigin& origin = lines[line - 1];
  // Code points to bytes within the output line.
  const size_t start = line_starts[line - 1];
  const size_t end = line < line_starts.size() ? line_starts[line] - 1 : text->size() - 1;
  size_t byte = 0;
  size_t cps = 0;
  while (start + byte < end && cps < column_cp) {
    const auto c = static_cast<unsigned char>((*text)[start + byte]);
    byte += c < 0x80 ? 1 : (c & 0xE0) == 0xC0 ? 2 : (c & 0xF0) == 0xE0 ? 3 : 4;
    ++cps;
  }
  byte += column_cp - cps;
  const LineOrigin::Segment* seg = &origin.segments.front();
  for (const auto& s : origin.segments) {
    if (s.out <= byte) {
      seg = &s;
    }
  }
  const size_t col = seg->clamp ? seg->orig : seg->orig + (byte - seg->out);
  return SourceLocation{files[origin.file], origin.line, u32(col + 1)};
}

uint32_t SourceMap::file_of(size_t line) const {
  if (line == 0 || line > lines.size()) {
    return lines.empty() ? 0 : lines.back().file;
  }
  return lines[line - 1].file;
}

bool preprocess(std::string_view text, const std::string& name, const FrontendOptions& options,
                Diagnostics& diags, PreprocessResult& out) {
  Preprocessor pp(options, diags, out);
  pp.run(text, name);
  out.map.text = &out.text;
  return pp.ok();
}

}  // namespace spindle::idlc::detail
