// Out-of-line helpers of the idlc AST (names, typedef resolution).
#include <spindle/idlc/ast.hpp>

namespace spindle::idlc {

std::string SourceLocation::str() const {
  std::string out = file ? *file : std::string("<unknown>");
  out += ':';
  out += std::to_string(line);
  out += ':';
  out += std::to_string(column);
  return out;
}

std::vector<std::string> Decl::module_path() const {
  std::vector<std::string> path;
  for (const ModuleDecl* m = parent; m != nullptr; m = m->parent) {
    path.push_back(m->name);
  }
  return {path.rbegin(), path.rend()};
}

std::string Decl::scoped_name() const {
  std::string out;
  for (const auto& component : module_path()) {
    out += component;
    out += "::";
  }
  out += name;
  return out;
}

const Type& resolve_typedefs(const Type& t, std::vector<uint64_t>* dims) {
  const Type* cur = &t;
  // A typedef chain is finite after sema (no typedef can name itself), but guard anyway so
  // that a generator fed a broken tree cannot loop forever.
  for (int guard = 0; guard < 1024; ++guard) {
    if (cur->kind != Type::Kind::Named || cur->decl == nullptr ||
        cur->decl->kind != DeclKind::Typedef) {
      return *cur;
    }
    const auto* td = static_cast<const TypedefDecl*>(cur->decl);
    if (!td->type) {
      return *cur;
    }
    if (dims != nullptr) {
      dims->insert(dims->end(), td->array_dims.begin(), td->array_dims.end());
    }
    cur = td->type.get();
  }
  return *cur;
}

}  // namespace spindle::idlc
