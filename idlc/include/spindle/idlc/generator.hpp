// The idlc C++ backend: IDL-to-C++11 mapping types plus CDR codecs and topic traits that
// call into the runtime templates of <spindle/cdr/…>.
//
// Threading: pure function of its inputs; no shared state.
#pragma once

#include <spindle/idlc/ast.hpp>
#include <spindle/idlc/frontend.hpp>
#include <spindle/version.hpp>

#include <string>
#include <vector>

namespace spindle::idlc {

inline constexpr const char* kIdlcVersion = spindle::kVersion;

struct GeneratedFile {
  std::string name;  // file name relative to the output directory
  std::string content;
};

struct CppGeneratorOptions {
  // Written into the "generated from X" banner; defaults to the main file's name.
  std::string source_name;
};

// Produces `<stem>.hpp` and `<stem>.cpp` for the main file of `spec`.
[[nodiscard]] std::vector<GeneratedFile> generate_cpp(const Specification& spec,
                                                      const CppGeneratorOptions& options);

}  // namespace spindle::idlc
