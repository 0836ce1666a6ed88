// The idlc parser: runs the ANTLR4 lexer and parser over the preprocessed text, turns
// syntax errors into positioned diagnostics, and walks the parse tree to build the AST
// (semantic helpers in sema.cpp). Also the front end's entry points parse_file/parse_text.
//
// Threading: every compilation builds its own lexer, parser and Builder. The only state shared
// between compilations is the DFA cache of ANTLR's generated recognizers, which the ANTLR
// 4.9 runtime guards with its own locks; idlc itself compiles one file at a time.
#include "builder.hpp"
#include "preprocessor.hpp"

#include <antlr4-runtime.h>

#include "IDLLexer.h"
#include "IDLParser.h"

#include <fstream>
#include <sstream>

namespace spindle::idlc {

namespace detail {

namespace {

using grammar::IDLLexer;
using grammar::IDLParser;
using Ctx = antlr4::ParserRuleContext;

// Brackets and sequences open at once, and unary operators in a row. Real IDL nests a few
// levels; the bound keeps the recursive parser and tree walk well inside an 8 MiB stack
// (also under AddressSanitizer).
constexpr int kMaxNesting = 100;

struct SyntaxAbort {};

size_t code_points(const std::string& s) {
  size_t n = 0;
  for (const char c : s) {
    if ((static_cast<unsigned char>(c) & 0xC0) != 0x80) {
      ++n;
    }
  }
  return n;
}

std::string shorten(std::string s) {
  if (code_points(s) > 32) {
    size_t cut = 0;
    size_t n = 0;
    while (cut < s.size() && n < 32) {
      ++cut;
      while (cut < s.size() && (static_cast<unsigned char>(s[cut]) & 0xC0) == 0x80) {
        ++cut;
      }
      ++n;
    }
    s = s.substr(0, cut) + "...";
  }
  return s;
}

std::string token_kind(const antlr4::dfa::Vocabulary& vocab, size_t type) {
  switch (type) {
    case antlr4::Token::EOF:
      return "end of file";
    case IDLParser::ID:
      return "identifier";
    case IDLParser::INTEGER_LITERAL:
      return "integer literal";
    case IDLParser::FLOAT_LITERAL:
      return "floating-point literal";
    case IDLParser::CHAR_LITERAL:
    case IDLParser::WCHAR_LITERAL:
      return "character literal";
    case IDLParser::STRING_LITERAL:
    case IDLParser::WSTRING_LITERAL:
      return "string literal";
    case IDLParser::KEYLIST_PRAGMA:
      return "#pragma keylist";
    case IDLParser::ANNOTATION_DCL:
      return "'@annotation'";
    default:
      break;
  }
  const std::string lit = vocab.getLiteralName(type);
  return lit.empty() ? vocab.getDisplayName(type) : lit;
}

std::string token_text(antlr4::Token* t) {
  if (t == nullptr || t->getType() == antlr4::Token::EOF) {
    return "end of file";
  }
  return "'" + shorten(t->getText()) + "'";
}

// Records the first syntax error and aborts the parse: later errors would only follow from
// the first one.
class FirstErrorListener : public antlr4::BaseErrorListener {
 public:
  FirstErrorListener(Diagnostics& diags, const SourceMap& map) : diags_(diags), map_(map) {}

  void syntaxError(antlr4::Recognizer* /*recognizer*/, antlr4::Token* offending, size_t line,
                   size_t column, const std::string& msg, std::exception_ptr /*e*/) override {
    if (offending != nullptr && offending->getType() == IDLLexer::INVALID_CHAR) {
      const std::string text = offending->getText();
      std::string m;
      if (text == "\"" || text == "'") {
        m = "invalid or unterminated " + std::string(text == "\"" ? "string" : "character") +
            " literal";
      } else if (text == "#") {
        m = "unexpected '#' (unknown or misplaced directive)";
      } else {
        m = "invalid character '" + text + "'";
      }
      diags_.error(map_.location(offending->getLine(), offending->getCharPositionInLine()), m);
    } else {
      diags_.error(map_.location(line, column), msg);
    }
    throw SyntaxAbort{};
  }

 private:
  Diagnostics& diags_;
  const SourceMap& map_;
};

// Produces readable messages; positions of a missing ';' go right after the previous token.
class ErrorStrategy : public antlr4::DefaultErrorStrategy {
 public:
  explicit ErrorStrategy(const SourceMap& map, Diagnostics& diags) : map_(map), diags_(diags) {}

 protected:
  void reportNoViableAlternative(antlr4::Parser* p,
                                 const antlr4::NoViableAltException& e) override {
    report(p, e.getOffendingToken(),
           "unexpected " + token_text(e.getOffendingToken()) +
               expected_suffix(p, e.getExpectedTokens()));
  }
  void reportInputMismatch(antlr4::Parser* p, const antlr4::InputMismatchException& e) override {
    const auto expected = e.getExpectedTokens();
    if (expected.contains(static_cast<size_t>(IDLParser::SEMI))) {
      missing_semi(p);
      return;
    }
    report(p, e.getOffendingToken(),
           "unexpected " + token_text(e.getOffendingToken()) + expected_suffix(p, expected));
  }
  void reportFailedPredicate(antlr4::Parser* p,
                             const antlr4::FailedPredicateException& e) override {
    report(p, e.getOffendingToken(), "unexpected " + token_text(e.getOffendingToken()));
  }
  void reportUnwantedToken(antlr4::Parser* p) override {
    if (inErrorRecoveryMode(p)) {
      return;
    }
    beginErrorCondition(p);
    antlr4::Token* t = p->getCurrentToken();
    const auto expected = getExpectedTokens(p);
    if (expected.contains(static_cast<size_t>(IDLParser::SEMI)) && expected.size() <= 3) {
      missing_semi(p);
      return;
    }
    report(p, t, "unexpected " + token_text(t) + expected_suffix(p, expected));
  }
  void reportMissingToken(antlr4::Parser* p) override {
    if (inErrorRecoveryMode(p)) {
      return;
    }
    beginErrorCondition(p);
    const auto expected = getExpectedTokens(p);
    if (expected.contains(static_cast<size_t>(IDLParser::SEMI))) {
      missing_semi(p);
      return;
    }
    antlr4::Token* t = p->getCurrentToken();
    report(p, t, "expected " + list(p, expected) + " before " + token_text(t));
  }

 private:
  static std::string list(antlr4::Parser* p, const antlr4::misc::IntervalSet& set) {
    std::vector<std::string> names;
    for (const auto v : set.toList()) {
      const std::string n = v < 0 ? std::string("end of file")
                                  : token_kind(p->getVocabulary(), static_cast<size_t>(v));
      if (std::find(names.begin(), names.end(), n) == names.end()) {
        names.push_back(n);
      }
    }
    std::string out;
    for (size_t i = 0; i < names.size(); ++i) {
      if (i > 0) {
        out += i + 1 == names.size() ? " or " : ", ";
      }
      out += names[i];
    }
    return out;
  }
  static std::string expected_suffix(antlr4::Parser* p, const antlr4::misc::IntervalSet& set) {
    if (p->getCurrentToken()->getType() == antlr4::Token::EOF &&
        set.contains(static_cast<size_t>(IDLParser::RBRACE))) {
      return ", expected '}'";
    }
    if (set.size() == 0 || set.size() > 4) {
      return "";
    }
    return ", expected " + list(p, set);
  }

  static std::string context_of(antlr4::Parser* p) {
    for (antlr4::RuleContext* c = p->getContext(); c != nullptr;
         c = dynamic_cast<antlr4::RuleContext*>(c->parent)) {
      switch (c->getRuleIndex()) {
        case IDLParser::RuleMember:
          return "member declaration";
        case IDLParser::RuleSwitchCase:
          return "union case";
        case IDLParser::RuleDefinition: {
          auto* def = static_cast<IDLParser::DefinitionContext*>(c);
          if (def->moduleDcl() != nullptr) {
            return "module";
          }
          if (def->constDcl() != nullptr) {
            return "constant declaration";
          }
          if (auto* t = def->typeDcl(); t != nullptr) {
            if (t->structDcl() != nullptr) {
              return "struct definition";
            }
            if (t->unionDcl() != nullptr) {
              return "union definition";
            }
            if (t->enumDcl() != nullptr) {
              return "enum definition";
            }
            if (t->bitmaskDcl() != nullptr) {
              return "bitmask definition";
            }
            if (t->typedefDcl() != nullptr) {
              return "typedef";
            }
            return "forward declaration";
          }
          return "declaration";
        }
        default:
          break;
      }
    }
    return "declaration";
  }

  void missing_semi(antlr4::Parser* p) {
    if (p->getCurrentToken()->getType() == IDLLexer::INVALID_CHAR) {
      p->notifyErrorListeners(p->getCurrentToken(), "", nullptr);  // "invalid character"
    }
    antlr4::Token* prev = p->getTokenStream()->LT(-1);
    SourceLocation where;
    if (prev != nullptr) {
      where = map_.location(prev->getLine(),
                            prev->getCharPositionInLine() + code_points(prev->getText()));
    } else {
      antlr4::Token* t = p->getCurrentToken();
      where = map_.location(t->getLine(), t->getCharPositionInLine());
    }
    diags_.error(where, "expected ';' after " + context_of(p));
    throw SyntaxAbort{};
  }

  void report(antlr4::Parser* p, antlr4::Token* t, const std::string& msg) {
    if (t == nullptr) {
      t = p->getCurrentToken();
    }
    p->notifyErrorListeners(t, msg, nullptr);
  }

  const SourceMap& map_;
  Diagnostics& diags_;
};

std::vector<Ctx*> as_ctx(const std::vector<IDLParser::AnnotationApplContext*>& v) {
  return {v.begin(), v.end()};
}

// Rejects token streams that would make the recursive parser or the tree walk too deep:
// brackets nest rules, and so do chains of unary operators. Everything else is a loop.
bool check_nesting(antlr4::CommonTokenStream& tokens, const SourceMap& map, Diagnostics& diags) {
  int depth = 0;      // ( [ {
  int sequences = 0;  // open `sequence<`; '<' and '>' are also shift operators, so only a
                      // '>' while a sequence is open counts as closing one
  int unary_run = 0;
  for (antlr4::Token* t : tokens.getTokens()) {
    switch (t->getType()) {
      case IDLLexer::LPAREN:
      case IDLLexer::LBRACKET:
      case IDLLexer::LBRACE:
        ++depth;
        break;
      case IDLLexer::RPAREN:
      case IDLLexer::RBRACKET:
      case IDLLexer::RBRACE:
        depth = depth > 0 ? depth - 1 : 0;
        break;
      case IDLLexer::KW_SEQUENCE:
        ++sequences;
        break;
      case IDLLexer::RANGLE:
        sequences = sequences > 0 ? sequences - 1 : 0;
        break;
      default:
        break;
    }
    const bool unary_op = t->getType() == IDLLexer::PLUS || t->getType() == IDLLexer::MINUS ||
                          t->getType() == IDLLexer::TILDE;
    unary_run = unary_op ? unary_run + 1 : 0;
    if (depth + sequences > kMaxNesting || unary_run > kMaxNesting) {
      diags.error(map.location(t->getLine(), t->getCharPositionInLine()),
                  unary_run > kMaxNesting ? "more than 100 unary operators in a row"
                                          : "nesting too deep (more than 100 levels)");
      return false;
    }
  }
  return true;
}

}  // namespace

// ===================================================================== Builder: the walk

Builder::Builder(Specification& spec, Diagnostics& diags, const SourceMap& map)
    : spec_(spec), diags_(diags), map_(map) {}

SourceLocation Builder::loc(const antlr4::Token* token) const {
  return map_.location(token->getLine(), token->getCharPositionInLine());
}

SourceLocation Builder::loc(antlr4::ParserRuleContext* ctx) const {
  return loc(ctx->getStart());
}

std::string Builder::identifier(antlr4::ParserRuleContext* ctx) const {
  std::string text = static_cast<IDLParser::IdentifierContext*>(ctx)->ID()->getText();
  // IDL escaped identifiers: a leading underscore is dropped (`_module` names `module`).
  if (text.size() > 1 && text[0] == '_') {
    text.erase(0, 1);
  }
  return text;
}

ScopedName Builder::scoped_name(antlr4::ParserRuleContext* ctx) const {
  auto* sn = static_cast<IDLParser::ScopedNameContext*>(ctx);
  ScopedName out;
  out.loc = loc(sn);
  out.absolute = !sn->SCOPE().empty() && sn->SCOPE(0)->getSymbol()->getTokenIndex() <
                                             sn->identifier(0)->getStart()->getTokenIndex();
  for (auto* id : sn->identifier()) {
    out.parts.push_back(identifier(id));
  }
  return out;
}

void Builder::place(Decl* d, std::vector<Decl*>& out) {
  d->parent = module_;
  d->from_main_file = d->loc.file && !map_.files.empty() && d->loc.file == map_.files[0];
  out.push_back(d);
}

void Builder::build(antlr4::ParserRuleContext* specification) {
  auto* spec = static_cast<IDLParser::SpecificationContext*>(specification);
  const auto parsed = spec->definition();
  std::vector<Ctx*> defs(parsed.begin(), parsed.end());
  definitions(defs, spec_.definitions);
  finish();
}

void Builder::definitions(const std::vector<Ctx*>& defs, std::vector<Decl*>& out) {
  for (auto* d : defs) {
    definition(d, out);
  }
}

void Builder::definition(Ctx* ctx, std::vector<Decl*>& out) {
  auto* def = static_cast<IDLParser::DefinitionContext*>(ctx);
  if (def->KEYLIST_PRAGMA() != nullptr) {
    keylist(def->KEYLIST_PRAGMA()->getSymbol());
    return;
  }
  if (def->annotationDcl() != nullptr) {
    annotation_dcl(def->annotationDcl(), out);
    return;
  }
  const auto anns = as_ctx(def->annotationAppl());
  if (def->moduleDcl() != nullptr) {
    module(def->moduleDcl(), anns, out);
  } else if (def->constDcl() != nullptr) {
    const_dcl(def->constDcl(), anns, out);
  } else if (auto* t = def->typeDcl(); t != nullptr) {
    if (t->structDcl() != nullptr) {
      struct_dcl(t->structDcl(), anns, out);
    } else if (t->structForwardDcl() != nullptr) {
      forward_dcl(t->structForwardDcl(), DeclKind::ForwardStruct, anns, out);
    } else if (t->unionDcl() != nullptr) {
      union_dcl(t->unionDcl(), anns, out);
    } else if (t->unionForwardDcl() != nullptr) {
      forward_dcl(t->unionForwardDcl(), DeclKind::ForwardUnion, anns, out);
    } else if (t->enumDcl() != nullptr) {
      enum_dcl(t->enumDcl(), anns, out);
    } else if (t->bitmaskDcl() != nullptr) {
      bitmask_dcl(t->bitmaskDcl(), anns, out);
    } else if (t->bitsetDcl() != nullptr) {
      bitset_dcl(t->bitsetDcl(), anns, out);
    } else if (t->typedefDcl() != nullptr) {
      typedef_dcl(t->typedefDcl(), anns, out);
    }
  }
}

void Builder::module(Ctx* ctx, const std::vector<Ctx*>& anns, std::vector<Decl*>& out) {
  auto* m = static_cast<IDLParser::ModuleDclContext*>(ctx);
  auto* decl = spec_.make<ModuleDecl>(identifier(m->identifier()), loc(m->identifier()));
  decl->annotations = annotations(anns, AnnotationSite::Module, nullptr);
  place(decl, out);
  ModuleDecl* enclosing = module_;
  if (enter_module(decl) == nullptr) {
    return;
  }
  module_ = decl;
  const auto parsed = m->definition();
  std::vector<Ctx*> defs(parsed.begin(), parsed.end());
  definitions(defs, decl->members);
  leave_module(enclosing);
}

void Builder::forward_dcl(Ctx* ctx, DeclKind kind, const std::vector<Ctx*>& anns,
                          std::vector<Decl*>& out) {
  Ctx* id =
      kind == DeclKind::ForwardStruct
          ? static_cast<Ctx*>(static_cast<IDLParser::StructForwardDclContext*>(ctx)->identifier())
          : static_cast<Ctx*>(static_cast<IDLParser::UnionForwardDclContext*>(ctx)->identifier());
  auto* decl = spec_.make<ForwardDecl>(kind, identifier(id), loc(id));
  decl->annotations = annotations(
      anns, kind == DeclKind::ForwardStruct ? AnnotationSite::Struct : AnnotationSite::Union,
      nullptr);
  place(decl, out);
  declare(decl);
}

std::vector<uint64_t> Builder::array_dims(Ctx* declarator, bool& ok) {
  auto* d = static_cast<IDLParser::DeclaratorContext*>(declarator);
  std::vector<uint64_t> dims;
  for (auto* a : d->arraySize()) {
    auto v = positive_bound(a->constExpr(), "array dimension");
    if (!v) {
      ok = false;
      continue;
    }
    dims.push_back(*v);
  }
  return dims;
}

MemberDecl Builder::member(Ctx* declarator, const TypePtr& type, std::vector<Annotation> anns) {
  auto* d = static_cast<IDLParser::DeclaratorContext*>(declarator);
  MemberDecl m;
  m.name = identifier(d->identifier());
  m.loc = loc(d->identifier());
  m.type = type;
  m.annotations = std::move(anns);
  return m;
}

void Builder::struct_dcl(Ctx* ctx, const std::vector<Ctx*>& anns, std::vector<Decl*>& out) {
  auto* s = static_cast<IDLParser::StructDclContext*>(ctx);
  auto* decl = spec_.make<StructDecl>(identifier(s->identifier()), loc(s->identifier()));
  decl->annotations = annotations(anns, AnnotationSite::Struct, nullptr);
  place(decl, out);
  structs_[decl] = decl;
  SourceLocation base_loc;
  if (s->scopedName() != nullptr) {
    const ScopedName base = scoped_name(s->scopedName());
    base_loc = base.loc;
    if (const Decl* b = lookup(base); b != nullptr) {
      const Decl* target = b;
      if (target->kind == DeclKind::Typedef) {
        const Type& t = resolve_typedefs(*static_cast<const TypedefDecl*>(target)->type);
        target =
            (t.kind == Type::Kind::Named && static_cast<const TypedefDecl*>(b)->array_dims.empty())
                ? t.decl
                : nullptr;
      }
      if (target != nullptr && target->kind == DeclKind::ForwardStruct) {
        const Decl* def = static_cast<const ForwardDecl*>(target)->definition;
        if (def == nullptr) {
          diags_.error(base_loc, "base type '" + base.str() + "' is incomplete");
        }
        target = def;
      } else if (target == nullptr || target->kind != DeclKind::Struct) {
        diags_.error(base_loc, "base type '" + base.str() + "' is not a struct");
        target = nullptr;
      }
      decl->base = static_cast<const StructDecl*>(target);
    }
  }
  declare(decl);
  in_progress_.push_back(decl);
  std::set<std::string> names;
  for (auto* mc : s->member()) {
    const TypePtr type = type_spec(mc->typeSpec());
    auto member_anns =
        annotations(as_ctx(mc->annotationAppl()), AnnotationSite::StructMember, type.get());
    for (auto* dc : mc->declarators()->declarator()) {
      bool ok = true;
      auto dims = array_dims(dc, ok);
      MemberDecl m = member(dc, type, member_anns);
      m.array_dims = std::move(dims);
      if (!type || !ok) {
        continue;
      }
      if (!check_by_value(type, m.loc)) {
        continue;
      }
      decl->members.push_back(std::move(m));
    }
  }
  in_progress_.pop_back();
  finish_struct(decl, base_loc);
}

void Builder::union_dcl(Ctx* ctx, const std::vector<Ctx*>& anns, std::vector<Decl*>& out) {
  auto* u = static_cast<IDLParser::UnionDclContext*>(ctx);
  auto* decl = spec_.make<UnionDecl>(identifier(u->identifier()), loc(u->identifier()));
  decl->annotations = annotations(anns, AnnotationSite::Union, nullptr);
  place(decl, out);
  decl->discriminator = type_spec(u->typeSpec());
  (void)annotations(as_ctx(u->annotationAppl()), AnnotationSite::Discriminator,
                    decl->discriminator.get());
  declare(decl);
  in_progress_.push_back(decl);
  std::vector<SourceLocation> default_locs;
  std::vector<std::vector<SourceLocation>> label_locs;
  const bool disc_ok = decl->discriminator != nullptr &&
                       check_discriminator(*decl->discriminator, loc(u->typeSpec()));
  for (auto* sc : u->switchCase()) {
    UnionCase c;
    std::vector<SourceLocation> locs;
    bool labels_ok = true;
    for (auto* label : sc->caseLabel()) {
      if (label->KW_DEFAULT() != nullptr) {
        if (c.is_default) {
          continue;
        }
        c.is_default = true;
        default_locs.push_back(loc(label));
        continue;
      }
      if (!disc_ok) {
        continue;
      }
      auto v = eval(label->constExpr(), target_of(decl->discriminator.get()));
      if (!v) {
        labels_ok = false;
        continue;
      }
      auto cv = convert(*v, *decl->discriminator, loc(label->constExpr()));
      if (!cv) {
        labels_ok = false;
        continue;
      }
      c.labels.push_back(*cv);
      locs.push_back(loc(label->constExpr()));
    }
    const TypePtr type = type_spec(sc->typeSpec());
    std::vector<Ctx*> case_anns = as_ctx(sc->annotationAppl());
    bool ok = true;
    auto dims = array_dims(sc->declarator(), ok);
    c.member = member(sc->declarator(), type,
                      annotations(case_anns, AnnotationSite::UnionMember, type.get()));
    c.member.array_dims = std::move(dims);
    if (!type || !ok || !labels_ok || !check_by_value(type, c.member.loc)) {
      continue;
    }
    decl->cases.push_back(std::move(c));
    label_locs.push_back(std::move(locs));
  }
  in_progress_.pop_back();
  if (disc_ok) {
    finish_union(decl, default_locs, label_locs);
  }
}

void Builder::enum_dcl(Ctx* ctx, const std::vector<Ctx*>& anns, std::vector<Decl*>& out) {
  auto* e = static_cast<IDLParser::EnumDclContext*>(ctx);
  auto* decl = spec_.make<EnumDecl>(identifier(e->identifier()), loc(e->identifier()));
  decl->annotations = annotations(anns, AnnotationSite::Enum, nullptr);
  place(decl, out);
  declare(decl);
  std::vector<std::vector<Annotation>> value_anns;
  for (auto* en : e->enumerator()) {
    auto* ed = spec_.make<EnumeratorDecl>(identifier(en->identifier()), loc(en->identifier()));
    ed->parent = module_;
    ed->from_main_file = decl->from_main_file;
    ed->owner = decl;
    ed->annotations =
        annotations(as_ctx(en->annotationAppl()), AnnotationSite::Enumerator, nullptr);
    value_anns.push_back(ed->annotations);
    if (declare(ed)) {
      decl->enumerators.push_back(ed);
    }
  }
  finish_enum(decl, value_anns);
}

void Builder::bitmask_dcl(Ctx* ctx, const std::vector<Ctx*>& anns, std::vector<Decl*>& out) {
  auto* b = static_cast<IDLParser::BitmaskDclContext*>(ctx);
  auto* decl = spec_.make<BitmaskDecl>(identifier(b->identifier()), loc(b->identifier()));
  decl->annotations = annotations(anns, AnnotationSite::Bitmask, nullptr);
  place(decl, out);
  declare(decl);
  std::vector<std::vector<Annotation>> value_anns;
  for (auto* bv : b->bitValue()) {
    BitValue v;
    v.name = identifier(bv->identifier());
    v.loc = loc(bv->identifier());
    value_anns.push_back(
        annotations(as_ctx(bv->annotationAppl()), AnnotationSite::BitValue, nullptr));
    decl->values.push_back(std::move(v));
  }
  finish_bitmask(decl, value_anns);
}

void Builder::bitset_dcl(Ctx* ctx, const std::vector<Ctx*>& anns, std::vector<Decl*>& out) {
  auto* b = static_cast<IDLParser::BitsetDclContext*>(ctx);
  auto* decl = spec_.make<BitsetDecl>(identifier(b->identifier()), loc(b->identifier()));
  decl->annotations = annotations(anns, AnnotationSite::Bitset, nullptr);
  place(decl, out);
  std::map<std::string, std::string> names;  // lower-case -> as written, base fields included
  uint32_t offset = 0;
  if (b->scopedName() != nullptr) {
    const ScopedName base = scoped_name(b->scopedName());
    if (const Decl* d = lookup(base); d != nullptr) {
      if (d->kind == DeclKind::Typedef) {
        const auto* td = static_cast<const TypedefDecl*>(d);
        const Type& t = resolve_typedefs(*td->type);
        d = t.kind == Type::Kind::Named && td->array_dims.empty() ? t.decl : nullptr;
      }
      if (d == nullptr || d->kind != DeclKind::Bitset) {
        diags_.error(base.loc, "base type '" + base.str() + "' is not a bitset");
      } else {
        decl->base = static_cast<const BitsetDecl*>(d);
        offset = decl->base->total_bits;
        for (const BitsetDecl* c = decl->base; c != nullptr; c = c->base) {
          for (const auto& f : c->fields) {
            if (!f.name.empty()) {
              names[lower_name(f.name)] = f.name;
            }
          }
        }
      }
    }
  }
  declare(decl);
  bool reported_width = false;
  for (auto* f : b->bitfield()) {
    auto* fs = f->bitfieldSpec();
    (void)annotations(as_ctx(f->annotationAppl()), AnnotationSite::Bitfield, nullptr);
    auto w = eval(fs->constExpr(), EvalTarget{true, 64});
    if (!w) {
      continue;
    }
    if (w->kind != EvalValue::Kind::Int || w->i < 1 || w->i > 64) {
      diags_.error(loc(fs->constExpr()), "bitfield width must be between 1 and 64");
      continue;
    }
    const auto width = static_cast<uint32_t>(w->i);
    TypePtr declared;
    if (fs->typeSpec() != nullptr) {
      declared = type_spec(fs->typeSpec());
      if (!declared) {
        continue;
      }
    }
    auto type = bitfield_type(declared.get(), width,
                              fs->typeSpec() != nullptr ? loc(fs->typeSpec()) : loc(fs));
    if (!type) {
      continue;
    }
    std::vector<std::pair<std::string, SourceLocation>> ids;
    for (auto* id : f->identifier()) {
      ids.emplace_back(identifier(id), loc(id));
    }
    if (ids.empty()) {
      ids.emplace_back(std::string(), loc(fs));  // padding
    }
    for (auto& [name, where] : ids) {
      if (!name.empty()) {
        const std::string key = lower_name(name);
        if (auto it = names.find(key); it != names.end()) {
          diags_.error(where, it->second == name
                                  ? "redefinition of bitfield '" + name + "'"
                                  : "bitfield '" + name + "' collides with '" + it->second +
                                        "' (IDL identifiers are case-insensitive)");
          continue;
        }
        names[key] = name;
      }
      if (offset + width > 64 && !reported_width) {
        diags_.error(where, "bitset '" + decl->name +
                                "' needs more than 64 bits; a bitset is "
                                "held in one integer of at most 64 bits");
        reported_width = true;
      }
      decl->fields.push_back(Bitfield{name, where, width, offset, *type});
      offset += width;
    }
  }
  if (offset == 0 && !reported_width) {
    diags_.error(decl->loc, "bitset '" + decl->name + "' has no bitfields");
  }
  decl->total_bits = offset > 64 ? 64 : offset;
}

void Builder::annotation_dcl(Ctx* ctx, std::vector<Decl*>& out) {
  auto* a = static_cast<IDLParser::AnnotationDclContext*>(ctx);
  auto* decl = spec_.make<AnnotationDecl>(identifier(a->identifier()), loc(a->identifier()));
  place(decl, out);
  if (is_builtin_annotation(decl->name)) {
    // The standards' own declarations of the built-in annotations, as IDL files sometimes
    // copy them: the built-in meaning stays, the body is not examined.
    return;
  }
  const std::string scoped = decl->scoped_name();
  if (user_annotations_.count(scoped) != 0) {
    diags_.error(decl->loc, "redefinition of annotation '@" + decl->name + "'");
    return;
  }
  std::set<std::string> members;
  for (auto* body : a->annotationBody()) {
    if (body->typeSpec() == nullptr) {
      diags_.error(loc(body),
                   "declarations inside an annotation declaration are not supported; declare "
                   "them before the annotation");
      continue;
    }
    AnnotationMemberDecl m;
    m.name = identifier(body->identifier());
    m.loc = loc(body->identifier());
    m.type = type_spec(body->typeSpec());
    if (!m.type || !check_const_type(*m.type, loc(body->typeSpec()))) {
      continue;
    }
    if (!members.insert(lower_name(m.name)).second) {
      diags_.error(m.loc, "redefinition of annotation member '" + m.name + "'");
      continue;
    }
    if (body->constExpr() != nullptr) {
      auto v = eval(body->constExpr(), target_of(m.type.get()));
      if (!v) {
        continue;
      }
      m.default_value = convert(*v, *m.type, loc(body->constExpr()));
      if (!m.default_value) {
        continue;
      }
    }
    decl->members.push_back(std::move(m));
  }
  user_annotations_[scoped] = decl;
  user_annotations_.emplace(decl->name, decl);  // a nearer declaration keeps the simple name
}

void Builder::typedef_dcl(Ctx* ctx, const std::vector<Ctx*>& anns, std::vector<Decl*>& out) {
  auto* t = static_cast<IDLParser::TypedefDclContext*>(ctx);
  const TypePtr type = type_spec(t->typeSpec());
  std::vector<Ctx*> all = anns;
  for (auto* a : t->annotationAppl()) {
    all.push_back(a);
  }
  for (auto* dc : t->declarators()->declarator()) {
    bool ok = true;
    auto dims = array_dims(dc, ok);
    auto* decl = spec_.make<TypedefDecl>(identifier(dc->identifier()), loc(dc->identifier()));
    decl->annotations = annotations(all, AnnotationSite::Typedef, type.get());
    decl->type = type;
    decl->array_dims = std::move(dims);
    place(decl, out);
    if (type && ok) {
      declare(decl);
    } else {
      // Keep later uses of the name quiet: they follow from this error.
      reported_.insert({scope_, decl->name});
    }
  }
}

void Builder::const_dcl(Ctx* ctx, const std::vector<Ctx*>& anns, std::vector<Decl*>& out) {
  auto* c = static_cast<IDLParser::ConstDclContext*>(ctx);
  auto* decl = spec_.make<ConstDecl>(identifier(c->identifier()), loc(c->identifier()));
  decl->annotations = annotations(anns, AnnotationSite::Const, nullptr);
  place(decl, out);
  decl->type = type_spec(c->typeSpec());
  bool ok = decl->type != nullptr && check_const_type(*decl->type, loc(c->typeSpec()));
  if (ok) {
    auto v = eval(c->constExpr(), target_of(decl->type.get()));
    std::optional<ConstValue> cv;
    if (v) {
      cv = convert(*v, *decl->type, loc(c->constExpr()));
    }
    if (cv) {
      decl->value = *cv;
    } else {
      ok = false;
    }
  }
  if (ok) {
    declare(decl);
  } else {
    reported_.insert({scope_, decl->name});
  }
}

// ------------------------------------------------------------------------------ types

TypePtr Builder::type_spec(Ctx* ctx) {
  auto* ts = static_cast<IDLParser::TypeSpecContext*>(ctx);
  if (auto* b = ts->baseType(); b != nullptr) {
    auto t = std::make_shared<Type>();
    t->kind = Type::Kind::Primitive;
    const size_t longs = b->KW_LONG().size();
    const bool u = b->KW_UNSIGNED() != nullptr;
    PrimitiveKind k = PrimitiveKind::Int32;
    if (b->KW_SHORT() != nullptr) {
      k = u ? PrimitiveKind::UInt16 : PrimitiveKind::Int16;
    } else if (b->KW_DOUBLE() != nullptr) {
      k = longs > 0 ? PrimitiveKind::LongDouble : PrimitiveKind::Double;
    } else if (longs == 2) {
      k = u ? PrimitiveKind::UInt64 : PrimitiveKind::Int64;
    } else if (longs == 1) {
      k = u ? PrimitiveKind::UInt32 : PrimitiveKind::Int32;
    } else if (b->KW_INT8() != nullptr) {
      k = PrimitiveKind::Int8;
    } else if (b->KW_UINT8() != nullptr) {
      k = PrimitiveKind::UInt8;
    } else if (b->KW_INT16() != nullptr) {
      k = PrimitiveKind::Int16;
    } else if (b->KW_UINT16() != nullptr) {
      k = PrimitiveKind::UInt16;
    } else if (b->KW_INT32() != nullptr) {
      k = PrimitiveKind::Int32;
    } else if (b->KW_UINT32() != nullptr) {
      k = PrimitiveKind::UInt32;
    } else if (b->KW_INT64() != nullptr) {
      k = PrimitiveKind::Int64;
    } else if (b->KW_UINT64() != nullptr) {
      k = PrimitiveKind::UInt64;
    } else if (b->KW_CHAR() != nullptr) {
      k = PrimitiveKind::Char;
    } else if (b->KW_WCHAR() != nullptr) {
      k = PrimitiveKind::WChar;
    } else if (b->KW_BOOLEAN() != nullptr) {
      k = PrimitiveKind::Boolean;
    } else if (b->KW_OCTET() != nullptr) {
      k = PrimitiveKind::Octet;
    } else if (b->KW_FLOAT() != nullptr) {
      k = PrimitiveKind::Float;
    }
    t->primitive = k;
    return t;
  }
  if (auto* s = ts->stringType(); s != nullptr) {
    auto t = std::make_shared<Type>();
    t->kind = Type::Kind::String;
    t->wide = s->KW_WSTRING() != nullptr;
    if (s->constExpr() != nullptr) {
      auto bound = positive_bound(s->constExpr(), "string bound");
      if (!bound) {
        return nullptr;
      }
      t->bound = *bound;
    }
    return t;
  }
  if (auto* mt = ts->mapType(); mt != nullptr) {
    TypePtr key = type_spec(mt->typeSpec(0));
    TypePtr value = type_spec(mt->typeSpec(1));
    std::optional<uint64_t> bound = 0;
    if (mt->constExpr() != nullptr) {
      bound = positive_bound(mt->constExpr(), "map bound");
    }
    if (!key || !value || !bound || !check_map_key(*key, loc(mt->typeSpec(0)))) {
      return nullptr;
    }
    auto t = std::make_shared<Type>();
    t->kind = Type::Kind::Map;
    t->key = key;
    t->element = value;
    t->bound = *bound;
    return t;
  }
  if (auto* q = ts->sequenceType(); q != nullptr) {
    TypePtr element = type_spec(q->typeSpec());
    std::optional<uint64_t> bound = 0;
    if (q->constExpr() != nullptr) {
      bound = positive_bound(q->constExpr(), "sequence bound");
    }
    if (!element || !bound) {
      return nullptr;
    }
    auto t = std::make_shared<Type>();
    t->kind = Type::Kind::Sequence;
    t->element = element;
    t->bound = *bound;
    return t;
  }
  return named_type(scoped_name(ts->scopedName()));
}

std::optional<uint64_t> Builder::positive_bound(Ctx* expr, const char* what) {
  auto v = eval(expr, EvalTarget{true, 64});
  if (!v) {
    return std::nullopt;
  }
  if (v->kind != EvalValue::Kind::Int || v->i <= 0) {
    diags_.error(loc(expr), std::string(what) + " must be a positive integer");
    return std::nullopt;
  }
  return static_cast<uint64_t>(v->i);
}

// ------------------------------------------------------------------------------ expressions

std::optional<EvalValue> Builder::eval(Ctx* expr, EvalTarget target) {
  return eval_node(expr, target, 0);
}

std::optional<EvalValue> Builder::eval_node(Ctx* node, EvalTarget target, int depth) {
  if (depth > 4 * kMaxNesting + 64) {
    diags_.error(loc(node), "expression nested too deeply");
    return std::nullopt;
  }
  // Walk down the single-child levels of the precedence chain and through parentheses in a
  // loop: only operators cost a stack frame.
  for (;;) {
    const size_t rule = node->getRuleIndex();
    if (rule == IDLParser::RuleConstExpr) {
      node = static_cast<IDLParser::ConstExprContext*>(node)->orExpr();
    } else if ((rule == IDLParser::RuleOrExpr || rule == IDLParser::RuleXorExpr ||
                rule == IDLParser::RuleAndExpr || rule == IDLParser::RuleShiftExpr ||
                rule == IDLParser::RuleAddExpr || rule == IDLParser::RuleMulExpr) &&
               node->children.size() == 1) {
      node = static_cast<Ctx*>(node->children[0]);
    } else if (rule == IDLParser::RuleUnaryExpr &&
               static_cast<IDLParser::UnaryExprContext*>(node)->primaryExpr() != nullptr) {
      node = static_cast<IDLParser::UnaryExprContext*>(node)->primaryExpr();
    } else if (rule == IDLParser::RulePrimaryExpr &&
               static_cast<IDLParser::PrimaryExprContext*>(node)->constExpr() != nullptr) {
      node = static_cast<IDLParser::PrimaryExprContext*>(node)->constExpr();
    } else {
      break;
    }
  }
  switch (node->getRuleIndex()) {
    case IDLParser::RuleConstExpr:
      return eval_node(static_cast<IDLParser::ConstExprContext*>(node)->orExpr(), target,
                       depth + 1);
    case IDLParser::RuleOrExpr:
    case IDLParser::RuleXorExpr:
    case IDLParser::RuleAndExpr:
    case IDLParser::RuleShiftExpr:
    case IDLParser::RuleAddExpr:
    case IDLParser::RuleMulExpr: {
      // Children alternate operand, operator, operand...; operators are terminals except
      // shiftOp, a two-token rule.
      std::optional<EvalValue> acc;
      std::string op;
      for (auto* child : node->children) {
        if (auto* rule = dynamic_cast<Ctx*>(child); rule != nullptr) {
          if (rule->getRuleIndex() == IDLParser::RuleShiftOp) {
            auto* so = static_cast<IDLParser::ShiftOpContext*>(rule);
            const auto* a = so->getStart();
            const auto* b = so->getStop();
            if (b->getStartIndex() != a->getStopIndex() + 1) {
              diags_.error(loc(a), "expected '" + a->getText() + a->getText() +
                                       "' (no space allowed inside a shift operator)");
              return std::nullopt;
            }
            op = a->getText() + b->getText();
            continue;
          }
          auto v = eval_node(rule, target, depth + 1);
          if (!v) {
            return std::nullopt;
          }
          if (!acc) {
            acc = v;
          } else {
            acc = binary(op, *acc, *v, loc(rule));
            if (!acc) {
              return std::nullopt;
            }
          }
        } else {
          op = child->getText();
        }
      }
      return acc;
    }
    case IDLParser::RuleUnaryExpr: {
      auto* u = static_cast<IDLParser::UnaryExprContext*>(node);
      if (u->primaryExpr() != nullptr) {
        return eval_node(u->primaryExpr(), target, depth + 1);
      }
      auto v = eval_node(u->unaryExpr(), target, depth + 1);
      if (!v) {
        return std::nullopt;
      }
      return unary(u->getStart()->getText()[0], *v, target, loc(u));
    }
    case IDLParser::RulePrimaryExpr: {
      auto* p = static_cast<IDLParser::PrimaryExprContext*>(node);
      if (p->constExpr() != nullptr) {
        return eval_node(p->constExpr(), target, depth + 1);
      }
      if (p->literal() != nullptr) {
        return literal(p->literal());
      }
      return name_value(scoped_name(p->scopedName()));
    }
    default:
      diags_.error(loc(node), "invalid constant expression");
      return std::nullopt;
  }
}

namespace {

// Decodes the body of a char/string literal (without quotes) into code points; `raw` marks
// those written as \xHH or octal escapes, which stand for bytes rather than characters.
bool decode_escapes(const std::string& body, std::u32string& out, std::vector<bool>& raw) {
  size_t i = 0;
  while (i < body.size()) {
    raw.resize(out.size(), false);
    const auto c = static_cast<unsigned char>(body[i]);
    if (c != '\\') {
      // UTF-8 decode (validated by the preprocessor).
      char32_t cp = 0;
      size_t len = 1;
      if (c < 0x80) {
        cp = c;
      } else if ((c & 0xE0) == 0xC0) {
        cp = c & 0x1Fu;
        len = 2;
      } else if ((c & 0xF0) == 0xE0) {
        cp = c & 0x0Fu;
        len = 3;
      } else {
        cp = c & 0x07u;
        len = 4;
      }
      for (size_t k = 1; k < len && i + k < body.size(); ++k) {
        cp = (cp << 6) | (static_cast<unsigned char>(body[i + k]) & 0x3Fu);
      }
      out.push_back(cp);
      i += len;
      continue;
    }
    ++i;
    if (i >= body.size()) {
      return false;
    }
    const char e = body[i++];
    switch (e) {
      case 'n':
        out.push_back(U'\n');
        break;
      case 't':
        out.push_back(U'\t');
        break;
      case 'v':
        out.push_back(U'\v');
        break;
      case 'b':
        out.push_back(U'\b');
        break;
      case 'r':
        out.push_back(U'\r');
        break;
      case 'f':
        out.push_back(U'\f');
        break;
      case 'a':
        out.push_back(U'\a');
        break;
      case '\\':
        out.push_back(U'\\');
        break;
      case '?':
        out.push_back(U'?');
        break;
      case '\'':
        out.push_back(U'\'');
        break;
      case '"':
        out.push_back(U'"');
        break;
      case 'x':
      case 'u': {
        const size_t max = e == 'x' ? 2 : 4;
        char32_t v = 0;
        size_t n = 0;
        while (n < max && i < body.size() &&
               std::isxdigit(static_cast<unsigned char>(body[i])) != 0) {
          const char h = body[i++];
          v = v * 16 + static_cast<char32_t>(std::isdigit(static_cast<unsigned char>(h)) != 0
                                                 ? h - '0'
                                                 : (std::tolower(h) - 'a' + 10));
          ++n;
        }
        if (n == 0 || (v >= 0xD800 && v <= 0xDFFF)) {
          return false;
        }
        out.push_back(v);
        raw.push_back(e == 'x');
        break;
      }
      default:
        if (e >= '0' && e <= '7') {
          char32_t v = static_cast<char32_t>(e - '0');
          size_t n = 1;
          while (n < 3 && i < body.size() && body[i] >= '0' && body[i] <= '7') {
            v = v * 8 + static_cast<char32_t>(body[i++] - '0');
            ++n;
          }
          out.push_back(v);
          raw.push_back(true);
          break;
        }
        return false;
    }
  }
  return true;
}

void append_utf8(std::string& out, char32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

}  // namespace

std::optional<EvalValue> Builder::literal(Ctx* ctx) {
  auto* l = static_cast<IDLParser::LiteralContext*>(ctx);
  EvalValue v;
  const SourceLocation where = loc(l);
  if (l->INTEGER_LITERAL() != nullptr) {
    const std::string text = l->INTEGER_LITERAL()->getText();
    unsigned base = 10;
    size_t i = 0;
    if (text.size() > 1 && (text[1] == 'x' || text[1] == 'X')) {
      base = 16;
      i = 2;
    } else if (text.size() > 1 && text[0] == '0') {
      base = 8;
      i = 1;
    }
    Int128 value = 0;
    for (; i < text.size(); ++i) {
      const char h = text[i];
      const int digit = std::isdigit(static_cast<unsigned char>(h)) != 0
                            ? h - '0'
                            : std::tolower(static_cast<unsigned char>(h)) - 'a' + 10;
      value = value * base + digit;
      if (value > static_cast<Int128>(UINT64_MAX)) {
        diags_.error(where, "integer literal '" + shorten(text) + "' is too large");
        return std::nullopt;
      }
    }
    v.kind = EvalValue::Kind::Int;
    v.i = value;
    return v;
  }
  if (l->FLOAT_LITERAL() != nullptr) {
    const std::string text = l->FLOAT_LITERAL()->getText();
    errno = 0;
    v.kind = EvalValue::Kind::Float;
    v.f = std::strtold(text.c_str(), nullptr);
    if (errno == ERANGE && (v.f > 1 || v.f < -1)) {
      diags_.error(where, "floating-point literal '" + shorten(text) + "' is out of range");
      return std::nullopt;
    }
    return v;
  }
  if (l->KW_TRUE() != nullptr || l->KW_FALSE() != nullptr) {
    v.kind = EvalValue::Kind::Bool;
    v.b = l->KW_TRUE() != nullptr;
    return v;
  }
  if (l->CHAR_LITERAL() != nullptr || l->WCHAR_LITERAL() != nullptr) {
    const bool wide = l->WCHAR_LITERAL() != nullptr;
    std::string text = (wide ? l->WCHAR_LITERAL() : l->CHAR_LITERAL())->getText();
    text = text.substr(wide ? 2 : 1, text.size() - (wide ? 3 : 2));
    std::u32string cps;
    std::vector<bool> raw;
    if (!decode_escapes(text, cps, raw) || cps.size() != 1) {
      diags_.error(where, "invalid character literal");
      return std::nullopt;
    }
    if (!wide && cps[0] > 0xFF) {
      diags_.error(where, "character literal does not fit in 'char'; use L'...'");
      return std::nullopt;
    }
    v.kind = EvalValue::Kind::Char;
    v.c = CharValue{cps[0], wide};
    return v;
  }
  const bool wide = !l->WSTRING_LITERAL().empty();
  const auto parts = wide ? l->WSTRING_LITERAL() : l->STRING_LITERAL();
  v.kind = EvalValue::Kind::String;
  v.s.wide = wide;
  for (auto* part : parts) {
    std::string text = part->getText();
    text = text.substr(wide ? 2 : 1, text.size() - (wide ? 3 : 2));
    std::u32string cps;
    std::vector<bool> raw;
    if (!decode_escapes(text, cps, raw)) {
      diags_.error(loc(part->getSymbol()), "invalid escape sequence in string literal");
      return std::nullopt;
    }
    raw.resize(cps.size(), false);
    for (size_t k = 0; k < cps.size(); ++k) {
      const char32_t cp = cps[k];
      if (cp == 0) {
        diags_.error(loc(part->getSymbol()), "string literal contains a NUL character");
        return std::nullopt;
      }
      if (!wide && raw[k] && cp <= 0xFF) {
        v.s.utf8 += static_cast<char>(cp);  // a byte written as \xHH or octal
      } else {
        append_utf8(v.s.utf8, cp);
      }
    }
  }
  return v;
}

// ------------------------------------------------------------------------------ annotations

// ------------------------------------------------------------------------------ #pragma keylist

void Builder::keylist(antlr4::Token* token) {
  const std::string text = token->getText();
  // Split into words with their column offsets.
  std::vector<std::pair<std::string, size_t>> words;
  size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && (text[i] == ' ' || text[i] == '\t')) {
      ++i;
    }
    const size_t start = i;
    while (i < text.size() && text[i] != ' ' && text[i] != '\t') {
      ++i;
    }
    if (i > start) {
      words.emplace_back(text.substr(start, i - start), start);
    }
  }
  // words[0] = "#pragma" or "#", then "pragma"; find "keylist".
  size_t k = 0;
  while (k < words.size() && words[k].first != "keylist") {
    ++k;
  }
  ++k;
  const auto where = [&](size_t offset) {
    return map_.location(token->getLine(), token->getCharPositionInLine() + offset);
  };
  if (k >= words.size()) {
    diags_.error(where(0), "#pragma keylist needs a type name");
    return;
  }
  ScopedName tname;
  tname.loc = where(words[k].second);
  {
    std::string w = words[k].first;
    if (w.rfind("::", 0) == 0) {
      tname.absolute = true;
      w.erase(0, 2);
    }
    size_t p = 0;
    while (true) {
      const size_t q = w.find("::", p);
      tname.parts.push_back(w.substr(p, q == std::string::npos ? std::string::npos : q - p));
      if (q == std::string::npos) {
        break;
      }
      p = q + 2;
    }
    for (const auto& part : tname.parts) {
      if (part.empty() ||
          (std::isalpha(static_cast<unsigned char>(part[0])) == 0 && part[0] != '_')) {
        diags_.error(tname.loc, "#pragma keylist: invalid type name '" + words[k].first + "'");
        return;
      }
    }
  }
  const Decl* d = lookup(tname);
  if (d == nullptr) {
    return;
  }
  if (d->kind == DeclKind::ForwardStruct) {
    d = static_cast<const ForwardDecl*>(d)->definition;
  }
  if (d == nullptr || d->kind != DeclKind::Struct) {
    diags_.error(tname.loc, "#pragma keylist: '" + tname.str() + "' is not a struct");
    return;
  }
  // Only the builder holds non-const pointers to declarations: find ours.
  auto found_struct = structs_.find(d);
  if (found_struct == structs_.end()) {
    return;
  }
  StructDecl* s = found_struct->second;
  if (keylists_.count(s) != 0) {
    diags_.error(tname.loc, "duplicate #pragma keylist for '" + s->name + "'");
    return;
  }
  if (has_key_annotation_.count(s) != 0) {
    diags_.error(tname.loc,
                 "#pragma keylist cannot be combined with @key members in '" + s->name + "'");
    return;
  }
  std::vector<KeylistEntry> entries;
  for (size_t w = k + 1; w < words.size(); ++w) {
    KeylistEntry entry;
    entry.loc = where(words[w].second);
    const StructDecl* cur = s;
    std::string path = words[w].first;
    size_t p = 0;
    bool ok = true;
    while (ok) {
      const size_t q = path.find('.', p);
      const std::string part = path.substr(p, q == std::string::npos ? std::string::npos : q - p);
      const MemberDecl* found = nullptr;
      for (const StructDecl* c = cur; c != nullptr && found == nullptr; c = c->base) {
        for (const auto& m : c->members) {
          if (m.name == part) {
            found = &m;
          }
        }
      }
      if (found == nullptr) {
        diags_.error(entry.loc,
                     "#pragma keylist: '" + part + "' is not a member of '" + cur->name + "'");
        ok = false;
        break;
      }
      entry.path.push_back(found);
      if (q == std::string::npos) {
        break;
      }
      const Type& t = resolve_typedefs(*found->type);
      if (t.kind != Type::Kind::Named || t.decl == nullptr || t.decl->kind != DeclKind::Struct ||
          !found->array_dims.empty()) {
        diags_.error(entry.loc, "#pragma keylist: member '" + part + "' is not a struct");
        ok = false;
        break;
      }
      cur = static_cast<const StructDecl*>(t.decl);
      p = q + 1;
    }
    if (!ok) {
      continue;
    }
    std::set<const Decl*> seen;
    const MemberDecl* leaf = entry.path.back();
    std::vector<uint64_t> dims = leaf->array_dims;
    const Type& lt = resolve_typedefs(*leaf->type, &dims);
    if (!keyable(lt, seen)) {
      diags_.error(entry.loc, "#pragma keylist: member '" + leaf->name + "' of type '" +
                                  type_name(*leaf->type) + "' cannot be a key");
      continue;
    }
    if (leaf->is_optional) {
      diags_.error(entry.loc,
                   "#pragma keylist: key member '" + leaf->name + "' cannot be @optional");
      continue;
    }
    // Mark the top-level member as a key (only members of `s` itself are ours to change).
    for (auto& m : s->members) {
      if (&m == entry.path.front()) {
        m.is_key = true;
      }
    }
    entries.push_back(std::move(entry));
  }
  keylists_[s] = std::move(entries);
}

}  // namespace detail

// ===================================================================== entry points

namespace {

std::unique_ptr<Specification> run(std::string_view text, const std::string& name,
                                   const FrontendOptions& options, Diagnostics& diags) {
  using namespace detail;
  PreprocessResult pp;
  if (!preprocess(text, name, options, diags, pp)) {
    return nullptr;
  }
  auto spec = std::make_unique<Specification>();
  spec->main_file = name;
  spec->direct_includes = pp.direct_includes;
  spec->source_files = pp.source_files;

  antlr4::ANTLRInputStream input(pp.text);
  grammar::IDLLexer lexer(&input);
  lexer.removeErrorListeners();
  FirstErrorListener listener(diags, pp.map);
  lexer.addErrorListener(&listener);
  antlr4::CommonTokenStream tokens(&lexer);
  grammar::IDLParser parser(&tokens);
  parser.removeErrorListeners();
  parser.addErrorListener(&listener);
  parser.setErrorHandler(std::make_shared<ErrorStrategy>(pp.map, diags));

  grammar::IDLParser::SpecificationContext* tree = nullptr;
  try {
    tokens.fill();
    if (!check_nesting(tokens, pp.map, diags)) {
      return nullptr;
    }
    tree = parser.specification();
  } catch (const SyntaxAbort&) {
    return nullptr;
  }
  Builder builder(*spec, diags, pp.map);
  builder.build(tree);
  if (diags.has_errors()) {
    return nullptr;
  }
  return spec;
}

}  // namespace

std::unique_ptr<Specification> parse_text(std::string_view text, const std::string& name,
                                          const FrontendOptions& options, Diagnostics& diags) {
  return run(text, name, options, diags);
}

std::unique_ptr<Specification> parse_file(const std::string& path, const FrontendOptions& options,
                                          Diagnostics& diags) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    diags.error(SourceLocation{std::make_shared<const std::string>(path), 0, 0},
                "cannot open file");
    return nullptr;
  }
  std::ostringstream buf;
  buf << in.rdbuf();
  return run(buf.str(), path, options, diags);
}

}  // namespace spindle::idlc
