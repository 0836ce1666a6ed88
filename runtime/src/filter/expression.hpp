// spindle::filter: the DDS content-filter and query expression language (DDS 1.4 annex B,
// "Syntax for DCPS Queries and Filters"), for ContentFilteredTopic (a filter expression) and
// QueryCondition (a query expression: a filter with an optional ORDER BY). docs/filters.md
// states the grammar accepted, the typing and parameter rules and the errors.
//
//   Expression::compile("a.b > %0 AND name LIKE 'x%'", Reflect<T>::info(), {"3"})
//
// compile() resolves every member path to its chain of getters (reflect.hpp) and checks
// every operand's type once; matches() then walks a small tree of AND/OR/NOT nodes over
// precompiled predicates, with no name lookups and no allocation. Bad text, an unknown
// member, a type mismatch or a parameter that does not parse throws FilterError naming the
// 1-based column (the DCPS layer rethrows it as dds::core::InvalidArgumentError).
//
// Threading: an Expression is a value. Its const members are safe from any number of threads
// at once; set_parameters() needs the caller to keep other users of the same object away.
// Copies share the compiled program (immutable) and are independent afterwards.
#pragma once

#include <compare>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <spindle/reflect.hpp>

namespace spindle::filter {

// what(): `filter "x >> 3", column 4: unexpected '>'`. column() is 1-based (a byte offset
// into the expression); 0 when the problem has no place in the text.
class FilterError : public std::runtime_error {
 public:
  FilterError(std::string_view expression, std::size_t column, const std::string& reason);
  [[nodiscard]] std::size_t column() const noexcept { return column_; }
  [[nodiscard]] const std::string& reason() const noexcept { return reason_; }

 private:
  std::size_t column_;
  std::string reason_;
};

// A ContentFilteredTopic takes a filter; a QueryCondition a query, which may end in
// `ORDER BY field, ...` (refused in a filter).
enum class Grammar : std::uint8_t { filter, query };

// When the parameters are checked against their uses: at once, or (a Query built up with
// add_parameter) only when bind() is called before the expression is used.
enum class Binding : std::uint8_t { now, later };

class Expression {
 public:
  // Throws FilterError. `parameters` are the texts of %0, %1, ...: each use is parsed as
  // the type of the member it is compared with (docs/filters.md, "Parameters").
  // With Binding::later the text and its members are checked, the parameters not (yet).
  [[nodiscard]] static Expression compile(std::string_view expression,
                                          const reflect::StructInfo& type,
                                          std::span<const std::string> parameters,
                                          Grammar grammar = Grammar::filter,
                                          Binding binding = Binding::now);

  // Whether `sample` (an object of the compiled type) passes. An expression that is only an
  // ORDER BY passes everything. Needs bound parameters (bound()).
  [[nodiscard]] bool matches(const void* sample) const;

  // Replaces the parameters, checking them against their uses as compile() does (with
  // Binding::later, not yet: bound() is false until bind()). Throws FilterError and leaves
  // this expression unchanged when one does not fit.
  void set_parameters(std::span<const std::string> parameters, Binding binding = Binding::now);
  // Checks and binds the parameters now; FilterError when one is missing or does not fit.
  void bind();
  [[nodiscard]] bool bound() const noexcept;

  [[nodiscard]] const std::string& expression() const noexcept;
  [[nodiscard]] std::span<const std::string> parameters() const noexcept;
  [[nodiscard]] const reflect::StructInfo& type() const noexcept;

  // ORDER BY (Grammar::query): the member paths as written, in order; empty when none.
  [[nodiscard]] std::span<const std::string> order_by() const noexcept;
  // How two samples sort by the ORDER BY keys (the first key that differs decides; equal
  // when there are none). An absent optional sorts before every value, NaN after every number.
  [[nodiscard]] std::weak_ordering order(const void* a, const void* b) const;

  struct Program;  // expression.cpp

 private:
  explicit Expression(std::shared_ptr<const Program> program) : program_(std::move(program)) {}
  std::shared_ptr<const Program> program_;
};

}  // namespace spindle::filter
