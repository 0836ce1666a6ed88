// Helpers shared by the idlc front-end tests: parse a text and find declarations by name.
// Threading: test code, single-threaded.
#pragma once

#include <spindle/idlc/frontend.hpp>

#include <catch2/catch.hpp>

#include <sstream>
#include <string>

namespace idlc_test {

using namespace spindle::idlc;

struct Parsed {
  Diagnostics diags;
  std::unique_ptr<Specification> spec;

  [[nodiscard]] std::string messages() const {
    std::ostringstream out;
    diags.print(out);
    return out.str();
  }
  [[nodiscard]] std::string first_error() const {
    for (const auto& d : diags.all()) {
      if (d.severity == Diagnostic::Severity::Error) {
        return d.str();
      }
    }
    return "";
  }

  // Any declaration (enumerators included) by its scoped name, e.g. "M::S".
  [[nodiscard]] const Decl* find(const std::string& scoped) const {
    if (!spec) {
      return nullptr;
    }
    for (const auto& d : spec->storage) {
      if (d->scoped_name() == scoped && d->kind != DeclKind::Module &&
          d->kind != DeclKind::ForwardStruct && d->kind != DeclKind::ForwardUnion) {
        return d.get();
      }
    }
    return nullptr;
  }
  template <class T>
  [[nodiscard]] const T& get(const std::string& scoped) const {
    const Decl* d = find(scoped);
    INFO("declaration " << scoped);
    REQUIRE(d != nullptr);
    return *static_cast<const T*>(d);
  }
};

inline Parsed parse(const std::string& text, const FrontendOptions& options = {}) {
  Parsed p;
  p.spec = parse_text(text, "test.idl", options, p.diags);
  return p;
}

inline const MemberDecl& member(const StructDecl& s, const std::string& name) {
  for (const auto& m : s.members) {
    if (m.name == name) {
      return m;
    }
  }
  FAIL("no member " << name << " in " << s.name);
  return s.members.front();
}

}  // namespace idlc_test
