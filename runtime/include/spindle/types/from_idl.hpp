// Types from IDL text at run time: the idlc front end (preprocessor, parser, semantic checks)
// as a library, its result turned into the dynamic type model. What idlc accepts, this
// accepts, with the same diagnostics; no code is generated and nothing is rebuilt per type.
//
// Threading: each call compiles on the calling thread and touches only the library given.
#pragma once

#include <spindle/types/dynamic_type.hpp>

#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace spindle::idlc {
struct Specification;
}

namespace spindle::types {

struct IdlOptions {
  std::vector<std::string> include_dirs;                     // searched in order, as idlc -I
  std::vector<std::pair<std::string, std::string>> defines;  // as idlc -D name[=value]
};

// The IDL could not be used: what() holds every diagnostic, one "file:line:col: error: ..."
// per line.
class IdlError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Compiles `path` (and what it includes) and adds every type declared there to `library`.
// A type already in the library is kept when an included file declares it again (two IDL
// files including one common file); the main file redefining one is an error. Throws
// IdlError.
void load_idl_file(TypeLibrary& library, const std::string& path, const IdlOptions& options = {});

// The same for IDL text; `name` stands for the file in diagnostics.
void load_idl_text(TypeLibrary& library, std::string_view text, const std::string& name,
                   const IdlOptions& options = {});

// Adds every type of a specification the front end has already checked (idlc uses this to
// generate each topic type's type information).
void load_specification(TypeLibrary& library, const idlc::Specification& spec);

}  // namespace spindle::types
