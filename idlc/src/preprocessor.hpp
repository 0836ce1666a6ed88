// The idlc preprocessor: #include, object-like #define, conditionals and #pragma, done by
// idlc itself (no external cpp) so that every position maps back to the original file.
//
// Output is one text for the whole compilation, comments removed, with a table that maps
// each output line (and each column through macro substitutions) back to the file, line
// and column it came from. Directive lines become blank lines except `#pragma keylist`,
// which is passed through verbatim for the grammar.
//
// Threading: one Preprocessor per compilation; no shared state.
#pragma once

#include <spindle/idlc/frontend.hpp>

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace spindle::idlc::detail {

// Where one output line came from. Columns are 0-based byte offsets; `segments` is sorted by
// `out` and always starts at {0, 0}. A column inside a macro expansion maps to the start of
// the macro name (`clamp`).
struct LineOrigin {
  struct Segment {
    uint32_t out = 0;
    uint32_t orig = 0;
    bool clamp = false;
  };
  uint32_t file = 0;  // index into SourceMap::files; 0 is the main file
  uint32_t line = 0;  // 1-based
  std::vector<Segment> segments;
};

struct SourceMap {
  std::vector<std::shared_ptr<const std::string>> files;  // names as used in diagnostics
  std::vector<LineOrigin> lines;                          // one per output line
  std::vector<size_t> line_starts;                        // byte offset of each output line
  const std::string* text = nullptr;                      // the output text

  // Maps an output position (1-based line, 0-based column in code points, as ANTLR counts)
  // to the original source. Out-of-range positions map to the end of the last line.
  [[nodiscard]] SourceLocation location(size_t line, size_t column_cp) const;
  // The index of the file an output line came from (0 = main file).
  [[nodiscard]] uint32_t file_of(size_t line) const;
};

struct PreprocessResult {
  std::string text;
  SourceMap map;
  std::vector<std::string> direct_includes;  // spelled names, main file only
  std::vector<std::string> source_files;     // every file read, main first
};

// Preprocesses `text` (the contents of `name`). Returns false when an error was reported.
[[nodiscard]] bool preprocess(std::string_view text, const std::string& name,
                              const FrontendOptions& options, Diagnostics& diags,
                              PreprocessResult& out);

}  // namespace spindle::idlc::detail
