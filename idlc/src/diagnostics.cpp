// Diagnostics collection and formatting ("file:line:col: error: message").
#include <spindle/idlc/frontend.hpp>

#include <ostream>

namespace spindle::idlc {

std::string Diagnostic::str() const {
  std::string out = loc.str();
  out += severity == Severity::Error ? ": error: " : ": warning: ";
  out += message;
  return out;
}

void Diagnostics::error(const SourceLocation& loc, std::string message) {
  diags_.push_back(Diagnostic{Diagnostic::Severity::Error, loc, std::move(message)});
  ++errors_;
}

void Diagnostics::warning(const SourceLocation& loc, std::string message) {
  diags_.push_back(Diagnostic{Diagnostic::Severity::Warning, loc, std::move(message)});
}

void Diagnostics::print(std::ostream& out) const {
  for (const auto& d : diags_) {
    out << d.str() << '\n';
  }
}

}  // namespace spindle::idlc
