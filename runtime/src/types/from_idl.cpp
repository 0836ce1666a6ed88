// IDL text to dynamic types: runs the idlc front end and maps its checked AST onto the
// dynamic type model (from_idl.hpp). Two passes: every named declaration gets its Type
// first, so that members can refer to types declared later (forward declarations, recursion).
#include <spindle/idlc/frontend.hpp>
#include <spindle/types/from_idl.hpp>

#include <sstream>
#include <unordered_map>

namespace spindle::types {

namespace {

namespace ast = spindle::idlc;

TypeKind kind_of(ast::PrimitiveKind k) {
  switch (k) {
    case ast::PrimitiveKind::Boolean:
      return TypeKind::Boolean;
    case ast::PrimitiveKind::Char:
      return TypeKind::Char8;
    case ast::PrimitiveKind::WChar:
      return TypeKind::Char16;
    case ast::PrimitiveKind::Octet:
      return TypeKind::Byte;
    case ast::PrimitiveKind::Int8:
      return TypeKind::Int8;
    case ast::PrimitiveKind::UInt8:
      return TypeKind::UInt8;
    case ast::PrimitiveKind::Int16:
      return TypeKind::Int16;
    case ast::PrimitiveKind::UInt16:
      return TypeKind::UInt16;
    case ast::PrimitiveKind::Int32:
      return TypeKind::Int32;
    case ast::PrimitiveKind::UInt32:
      return TypeKind::UInt32;
    case ast::PrimitiveKind::Int64:
      return TypeKind::Int64;
    case ast::PrimitiveKind::UInt64:
      return TypeKind::UInt64;
    case ast::PrimitiveKind::Float:
      return TypeKind::Float32;
    case ast::PrimitiveKind::Double:
      return TypeKind::Float64;
    case ast::PrimitiveKind::LongDouble:
      return TypeKind::Float128;
  }
  return TypeKind::Int32;
}

Extensibility ext_of(ast::Extensibility e) {
  return e == ast::Extensibility::Final        ? Extensibility::Final
         : e == ast::Extensibility::Appendable ? Extensibility::Appendable
                                               : Extensibility::Mutable;
}

Literal literal_of(const ast::ConstValue& v) {
  struct Visit {
    Literal operator()(bool b) const { return b; }
    Literal operator()(int64_t i) const { return i; }
    Literal operator()(uint64_t u) const { return u; }
    Literal operator()(long double d) const { return d; }
    Literal operator()(const ast::CharValue& c) const { return static_cast<int64_t>(c.value); }
    Literal operator()(const ast::StringValue& s) const { return s.utf8; }
    Literal operator()(const ast::EnumeratorDecl* e) const {
      return static_cast<int64_t>(e->value);
    }
  };
  return std::visit(Visit{}, v);
}

int64_t label_of(const ast::ConstValue& v) {
  const Literal l = literal_of(v);
  if (const auto* b = std::get_if<bool>(&l)) return *b ? 1 : 0;
  if (const auto* i = std::get_if<int64_t>(&l)) return *i;
  if (const auto* u = std::get_if<uint64_t>(&l)) return static_cast<int64_t>(*u);
  return 0;  // sema converts labels to the discriminator's (integral) type
}

class Mapper {
 public:
  Mapper(TypeLibrary& lib, const ast::Specification& spec) : lib_(lib), spec_(spec) {}

  void run() {
    std::vector<std::pair<const ast::Decl*, TypeKind>> named;
    collect(spec_.definitions, named);
    // Refuse a clash before adding anything: a failed load leaves the library as it was.
    for (const auto& [d, k] : named) {
      if (lib_.find(d->scoped_name()) != nullptr && d->from_main_file) {
        throw IdlError(d->loc.str() + ": error: type '" + d->scoped_name() +
                       "' is already defined by an IDL file loaded earlier");
      }
    }
    for (const auto& [d, k] : named) {
      if (const Type* existing = lib_.find(d->scoped_name())) {
        known_.emplace(d, existing);  // declared by an earlier file that included it too
        continue;
      }
      Type* t = lib_.add_named(k, d->scoped_name());
      known_.emplace(d, t);
      pending_.emplace_back(d, t);
    }
    for (auto& [decl, type] : pending_)
      fill(*decl, *type);
  }

 private:
  static void collect(const std::vector<ast::Decl*>& decls,
                      std::vector<std::pair<const ast::Decl*, TypeKind>>& out) {
    for (const ast::Decl* d : decls) {
      TypeKind k{};
      switch (d->kind) {
        case ast::DeclKind::Module:
          collect(static_cast<const ast::ModuleDecl*>(d)->members, out);
          continue;
        case ast::DeclKind::Struct:
          k = TypeKind::Struct;
          break;
        case ast::DeclKind::Union:
          k = TypeKind::Union;
          break;
        case ast::DeclKind::Enum:
          k = TypeKind::Enum;
          break;
        case ast::DeclKind::Bitmask:
          k = TypeKind::Bitmask;
          break;
        case ast::DeclKind::Bitset:
          k = TypeKind::Bitset;
          break;
        case ast::DeclKind::Typedef:
          k = TypeKind::Alias;
          break;
        default:
          continue;
      }
      out.emplace_back(d, k);
    }
  }

  const Type* type_of(const ast::Type& t) {
    switch (t.kind) {
      case ast::Type::Kind::Primitive:
        return lib_.primitive(kind_of(t.primitive));
      case ast::Type::Kind::String:
        return lib_.string(t.wide ? TypeKind::String16 : TypeKind::String8, t.bound);
      case ast::Type::Kind::Sequence:
        return lib_.sequence(type_of(*t.element), t.bound);
      case ast::Type::Kind::Map:
        return lib_.map(type_of(*t.key), type_of(*t.element), t.bound);
      case ast::Type::Kind::Named: {
        auto it = known_.find(t.decl);
        if (it == known_.end())
          throw IdlError("internal: declaration '" + t.decl->scoped_name() + "' not mapped");
        return it->second;
      }
    }
    return nullptr;
  }

  const Type* with_dims(const Type* t, const std::vector<uint64_t>& dims) {
    if (dims.empty()) return t;
    std::vector<uint32_t> d;
    for (const uint64_t n : dims) {
      if (n > UINT32_MAX) throw IdlError("array dimension " + std::to_string(n) + " over 2^32-1");
      d.push_back(static_cast<uint32_t>(n));
    }
    return lib_.array(t, std::move(d));
  }

  Member member_of(const ast::MemberDecl& m) {
    Member out;
    out.name = m.name;
    out.id = m.id;
    out.type = with_dims(type_of(*m.type), m.array_dims);
    out.key = m.is_key;
    out.optional = m.is_optional;
    out.must_understand = m.must_understand;
    out.external = m.is_external;
    if (m.default_value) out.default_value = literal_of(*m.default_value);
    if (m.min) out.min = literal_of(*m.min);
    if (m.max) out.max = literal_of(*m.max);
    return out;
  }

  void fill(const ast::Decl& d, Type& t) {
    switch (d.kind) {
      case ast::DeclKind::Struct: {
        const auto& s = static_cast<const ast::StructDecl&>(d);
        if (s.base != nullptr) t.base = known_.at(s.base);
        t.extensibility = ext_of(s.extensibility);
        t.extensibility_explicit = s.extensibility_explicit;
        t.representations = s.representations;
        t.nested = s.is_nested;
        for (const auto& m : s.members)
          t.members.push_back(member_of(m));
        // A #pragma keylist names keys without @key: mark the members its paths start at.
        for (const auto& path : s.key_paths) {
          for (auto& m : t.members)
            if (!path.empty() && m.name == path.front()->name) m.key = true;
        }
        break;
      }
      case ast::DeclKind::Union: {
        const auto& u = static_cast<const ast::UnionDecl&>(d);
        t.discriminator = type_of(*u.discriminator);
        t.extensibility = ext_of(u.extensibility);
        t.extensibility_explicit = u.extensibility_explicit;
        t.representations = u.representations;
        t.nested = u.is_nested;
        for (const auto& c : u.cases) {
          UnionCase uc;
          for (const auto& l : c.labels)
            uc.labels.push_back(label_of(l));
          uc.is_default = c.is_default;
          uc.member = member_of(c.member);
          t.cases.push_back(std::move(uc));
        }
        if (u.implicit_default) t.implicit_default = label_of(*u.implicit_default);
        break;
      }
      case ast::DeclKind::Enum: {
        const auto& e = static_cast<const ast::EnumDecl&>(d);
        t.bound = e.bit_bound;
        t.extensibility = ext_of(e.extensibility);
        for (const auto* en : e.enumerators)
          t.enumerators.push_back({en->name, static_cast<int32_t>(en->value)});
        break;
      }
      case ast::DeclKind::Bitmask: {
        const auto& b = static_cast<const ast::BitmaskDecl&>(d);
        t.bound = b.bit_bound;
        for (const auto& v : b.values)
          t.flags.push_back({v.name, v.position});
        break;
      }
      case ast::DeclKind::Bitset: {
        const auto& b = static_cast<const ast::BitsetDecl&>(d);
        if (b.base != nullptr) t.base = known_.at(b.base);
        t.total_bits = b.total_bits;
        for (const auto& f : b.fields)
          t.bitfields.push_back({f.name, f.width, f.offset, kind_of(f.type)});
        break;
      }
      case ast::DeclKind::Typedef: {
        const auto& td = static_cast<const ast::TypedefDecl&>(d);
        t.element = with_dims(type_of(*td.type), td.array_dims);
        break;
      }
      default:
        break;
    }
  }

  TypeLibrary& lib_;
  const ast::Specification& spec_;
  std::unordered_map<const ast::Decl*, const Type*> known_;
  std::vector<std::pair<const ast::Decl*, Type*>> pending_;
};

[[noreturn]] void fail(const ast::Diagnostics& diags) {
  std::ostringstream os;
  diags.print(os);
  throw IdlError(os.str());
}

ast::FrontendOptions frontend_options(const IdlOptions& o) {
  ast::FrontendOptions f;
  f.include_dirs = o.include_dirs;
  f.defines = o.defines;
  return f;
}

}  // namespace

void load_specification(TypeLibrary& library, const idlc::Specification& spec) {
  Mapper(library, spec).run();
}

void load_idl_file(TypeLibrary& library, const std::string& path, const IdlOptions& options) {
  ast::Diagnostics diags;
  auto spec = ast::parse_file(path, frontend_options(options), diags);
  if (!spec || diags.has_errors()) fail(diags);
  Mapper(library, *spec).run();
}

void load_idl_text(TypeLibrary& library, std::string_view text, const std::string& name,
                   const IdlOptions& options) {
  ast::Diagnostics diags;
  auto spec = ast::parse_text(text, name, frontend_options(options), diags);
  if (!spec || diags.has_errors()) fail(diags);
  Mapper(library, *spec).run();
}

}  // namespace spindle::types
