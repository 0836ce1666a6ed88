// The idlc AST builder and semantic checker.
//
// IDL requires a name to be declared before it is used, so building and checking happen in
// one walk over the parse tree in source order: parser.cpp walks the tree and creates the
// declarations, sema.cpp owns scopes, name resolution, constant evaluation, annotations and
// the checks that need a complete type (keys, ids, recursion, forward declarations).
//
// Error suppression: a name that fails to resolve is reported once per scope; whatever
// depends on it (a member of that type, a constant using it) is dropped silently.
//
// Threading: one Builder per compilation; no shared state.
#pragma once

#include "preprocessor.hpp"

#include <spindle/idlc/ast.hpp>
#include <spindle/idlc/frontend.hpp>

#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace antlr4 {
class Token;
class ParserRuleContext;
}  // namespace antlr4

namespace spindle::idlc::grammar {
class IDLParser;
}

namespace spindle::idlc::detail {

__extension__ typedef __int128 Int128;  // constant arithmetic with room for overflow checks

// The value of a (sub)expression while evaluating; converted to a ConstValue once the
// target type is known.
struct EvalValue {
  enum class Kind : uint8_t { Int, Float, Bool, Char, String, Enumerator };
  Kind kind = Kind::Int;
  Int128 i = 0;
  long double f = 0;
  bool b = false;
  CharValue c;
  StringValue s;
  const EnumeratorDecl* e = nullptr;
};

// What an expression is evaluated for: `~` on an unsigned target complements within the
// target's width.
struct EvalTarget {
  bool is_unsigned = false;
  unsigned bits = 64;
};

// A module scope (all openings of a module share one), or the global scope.
struct Scope {
  Scope* parent = nullptr;
  std::string name;                                       // "" for the global scope
  std::map<std::string, Decl*> names;                     // key: lower-case name
  std::map<std::string, std::unique_ptr<Scope>> modules;  // key: lower-case name
};

struct ScopedName {
  std::vector<std::string> parts;
  bool absolute = false;
  SourceLocation loc;
  [[nodiscard]] std::string str() const;
};

// Where an annotation stands; decides which annotations apply.
enum class AnnotationSite : uint8_t {
  Module,
  Struct,
  Union,
  StructMember,
  UnionMember,
  Enum,
  Enumerator,
  Bitmask,
  BitValue,
  Typedef,
  Const,
  Discriminator,
  Bitset,
  Bitfield,
};

// IDL identifiers collide case-insensitively; names are compared in lower case.
[[nodiscard]] std::string lower_name(std::string s);
// One of the annotations of IDL 4.2 / XTypes 1.3 that idlc knows (acted upon or not).
[[nodiscard]] bool is_builtin_annotation(const std::string& name);

struct KeylistEntry {
  std::vector<const MemberDecl*> path;
  SourceLocation loc;
};

class Builder {
 public:
  Builder(Specification& spec, Diagnostics& diags, const SourceMap& map);

  // parser.cpp: walks a parse tree (a grammar::IDLParser::SpecificationContext).
  void build(antlr4::ParserRuleContext* specification);

 private:
  // ---------------------------------------------------------------- parser.cpp (the walk)
  void definitions(const std::vector<antlr4::ParserRuleContext*>& defs, std::vector<Decl*>& out);
  void definition(antlr4::ParserRuleContext* def, std::vector<Decl*>& out);
  void module(antlr4::ParserRuleContext* ctx, const std::vector<antlr4::ParserRuleContext*>& anns,
              std::vector<Decl*>& out);
  void struct_dcl(antlr4::ParserRuleContext* ctx,
                  const std::vector<antlr4::ParserRuleContext*>& anns, std::vector<Decl*>& out);
  void union_dcl(antlr4::ParserRuleContext* ctx,
                 const std::vector<antlr4::ParserRuleContext*>& anns, std::vector<Decl*>& out);
  void enum_dcl(antlr4::ParserRuleContext* ctx, const std::vector<antlr4::ParserRuleContext*>& anns,
                std::vector<Decl*>& out);
  void bitmask_dcl(antlr4::ParserRuleContext* ctx,
                   const std::vector<antlr4::ParserRuleContext*>& anns, std::vector<Decl*>& out);
  void bitset_dcl(antlr4::ParserRuleContext* ctx,
                  const std::vector<antlr4::ParserRuleContext*>& anns, std::vector<Decl*>& out);
  void annotation_dcl(antlr4::ParserRuleContext* ctx, std::vector<Decl*>& out);
  void typedef_dcl(antlr4::ParserRuleContext* ctx,
                   const std::vector<antlr4::ParserRuleContext*>& anns, std::vector<Decl*>& out);
  void const_dcl(antlr4::ParserRuleContext* ctx,
                 const std::vector<antlr4::ParserRuleContext*>& anns, std::vector<Decl*>& out);
  void forward_dcl(antlr4::ParserRuleContext* ctx, DeclKind kind,
                   const std::vector<antlr4::ParserRuleContext*>& anns, std::vector<Decl*>& out);
  void keylist(antlr4::Token* token);

  // A type spec; nullptr after an error was reported (or suppressed).
  TypePtr type_spec(antlr4::ParserRuleContext* ctx);
  std::optional<uint64_t> positive_bound(antlr4::ParserRuleContext* expr, const char* what);
  std::optional<EvalValue> eval(antlr4::ParserRuleContext* expr, EvalTarget target);
  std::optional<EvalValue> eval_node(antlr4::ParserRuleContext* node, EvalTarget target, int depth);
  std::optional<EvalValue> literal(antlr4::ParserRuleContext* ctx);
  ScopedName scoped_name(antlr4::ParserRuleContext* ctx) const;
  std::string identifier(antlr4::ParserRuleContext* ctx) const;
  std::vector<Annotation> annotations(const std::vector<antlr4::ParserRuleContext*>& anns,
                                      AnnotationSite site, const Type* target);
  std::optional<Annotation> annotation(antlr4::ParserRuleContext* ctx, AnnotationSite site,
                                       const Type* target);
  MemberDecl member(antlr4::ParserRuleContext* declarator, const TypePtr& type,
                    std::vector<Annotation> anns);
  std::vector<uint64_t> array_dims(antlr4::ParserRuleContext* declarator, bool& ok);

  SourceLocation loc(const antlr4::Token* token) const;
  SourceLocation loc(antlr4::ParserRuleContext* ctx) const;
  void place(Decl* d, std::vector<Decl*>& out);

  // ---------------------------------------------------------------- sema.cpp
  void finish();

  // Scopes and names.
  bool declare(Decl* d);
  const Decl* lookup(const ScopedName& name);
  Scope* enter_module(ModuleDecl* m);
  void leave_module(ModuleDecl* enclosing);
  TypePtr named_type(const ScopedName& name);

  // Constants.
  std::optional<EvalValue> unary(char op, const EvalValue& v, EvalTarget target,
                                 const SourceLocation& where);
  std::optional<EvalValue> binary(const std::string& op, const EvalValue& a, const EvalValue& b,
                                  const SourceLocation& where);
  std::optional<EvalValue> name_value(const ScopedName& name);
  std::optional<ConstValue> convert(const EvalValue& v, const Type& target,
                                    const SourceLocation& where);
  static EvalTarget target_of(const Type* t);
  bool check_const_type(const Type& t, const SourceLocation& where);
  bool check_discriminator(const Type& t, const SourceLocation& where);
  bool check_map_key(const Type& t, const SourceLocation& where);
  // A bitfield's destination type: boolean (width 1), octet or an integer type wide enough.
  std::optional<PrimitiveKind> bitfield_type(const Type* declared, uint64_t width,
                                             const SourceLocation& where);
  // A user-declared annotation applied: parameters checked against its members.
  std::optional<Annotation> user_annotation(antlr4::ParserRuleContext* ctx, Annotation ann,
                                            const AnnotationDecl& decl);
  const AnnotationDecl* find_user_annotation(const std::string& name) const;

  // Declarations that need their members.
  void finish_struct(StructDecl* s, const SourceLocation& base_loc);
  void finish_union(UnionDecl* u, const std::vector<SourceLocation>& default_locs,
                    const std::vector<std::vector<SourceLocation>>& case_label_locs);
  void finish_enum(EnumDecl* e, const std::vector<std::vector<Annotation>>& value_anns);
  void finish_bitmask(BitmaskDecl* b, const std::vector<std::vector<Annotation>>& value_anns);
  void apply_member_annotations(MemberDecl& m, bool in_union);
  void apply_type_annotations(Decl* d, Extensibility* ext);
  bool check_by_value(const TypePtr& type, const SourceLocation& where);
  bool keyable(const Type& t, std::set<const Decl*>& seen) const;
  void assign_member_ids(std::vector<MemberDecl*>& members, const Decl* owner, uint32_t first_id,
                         std::vector<std::pair<uint32_t, std::string>> taken);
  void compute_key_paths(StructDecl* s);
  void expand_key(std::vector<const MemberDecl*> prefix, const MemberDecl* m,
                  std::vector<std::vector<const MemberDecl*>>& out, int depth);
  std::string type_name(const Type& t) const;
  std::string value_str(const ConstValue& v) const;

  Specification& spec_;
  Diagnostics& diags_;
  const SourceMap& map_;

  Scope global_;
  Scope* scope_ = &global_;
  ModuleDecl* module_ = nullptr;  // the current module opening
  std::set<std::pair<const Scope*, std::string>> reported_;
  std::vector<const Decl*> in_progress_;  // types whose members are being built
  std::vector<std::pair<std::shared_ptr<Type>, SourceLocation>> forward_uses_;
  std::map<const StructDecl*, std::vector<KeylistEntry>> keylists_;
  std::map<const Decl*, StructDecl*> structs_;
  std::vector<std::pair<ForwardDecl*, Scope*>> forwards_;
  std::map<const Decl*, Scope*> module_scopes_;
  std::set<const StructDecl*> has_key_annotation_;
  std::map<const Decl*, std::string> autoid_;  // "SEQUENTIAL" / "HASH" when given
  std::map<const Decl*, bool> topic_annotation_;
  std::set<const Decl*> incomplete_reported_;  // forward decls already reported at a use
  // User `@annotation` declarations by scoped name and by simple name (annotation names
  // live apart from type names, IDL 4.2 7.4.15.4).
  std::map<std::string, const AnnotationDecl*> user_annotations_;
};

}  // namespace spindle::idlc::detail
