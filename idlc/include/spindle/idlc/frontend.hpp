// The idlc front end: preprocess, parse and check IDL into a Specification.
//
// Diagnostics are collected, never thrown: every error of a file is reported with its
// position in the original (pre-preprocessing) source, and errors that only follow from an
// earlier one are suppressed. Threading: one compilation per thread; no shared state.
#pragma once

#include <spindle/idlc/ast.hpp>

#include <iosfwd>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace spindle::idlc {

struct Diagnostic {
  enum class Severity : uint8_t { Error, Warning };
  Severity severity = Severity::Error;
  SourceLocation loc;
  std::string message;

  // "file:line:col: error: message"
  [[nodiscard]] std::string str() const;
};

class Diagnostics {
 public:
  void error(const SourceLocation& loc, std::string message);
  void warning(const SourceLocation& loc, std::string message);

  [[nodiscard]] bool has_errors() const { return errors_ > 0; }
  [[nodiscard]] size_t error_count() const { return errors_; }
  [[nodiscard]] const std::vector<Diagnostic>& all() const { return diags_; }
  void print(std::ostream& out) const;

 private:
  std::vector<Diagnostic> diags_;
  size_t errors_ = 0;
};

struct FrontendOptions {
  std::vector<std::string> include_dirs;                     // -I, searched in order
  std::vector<std::pair<std::string, std::string>> defines;  // -D name[=value]
};

// Reads `path` and everything it includes. Returns nullptr when any error was reported.
[[nodiscard]] std::unique_ptr<Specification> parse_file(const std::string& path,
                                                        const FrontendOptions& options,
                                                        Diagnostics& diags);

// Same for in-memory text (tests, fuzzing); `name` is used in positions. #include still
// searches the file system through `options.include_dirs`.
[[nodiscard]] std::unique_ptr<Specification> parse_text(std::string_view text,
                                                        const std::string& name,
                                                        const FrontendOptions& options,
                                                        Diagnostics& diags);

}  // namespace spindle::idlc
