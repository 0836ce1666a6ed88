// dds::sub::Query: a query expression over a DataReader's samples, with %n parameters
// (DDS-PSM-Cxx §7.5.5, DCPS §2.2.2.5.9): the language of DDS 1.4 annex B, a filter that may
// end in `ORDER BY member, ...` (docs/filters.md). Reads with it —
// `reader.select().content(query).read()` — return only the valid samples that pass it,
// sorted by the ORDER BY keys when it has some; a QueryCondition triggers on them. The
// expression is checked against the reader's type when the Query is made or changed; its
// parameters when it is first used (a QueryCondition made, a read) and, from then on, when
// they change — so `Query q(reader, "x > %0"); q.add_parameter("3");` works.
// InvalidArgumentError naming the column.
//
// Threading: a reference; copies share the query, and its parameters may be changed from
// any thread (a read in progress uses the old or the new ones).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <dds/core/Exception.hpp>
#include <dds/sub/AnyDataReader.hpp>
#include <spindle/detail/dcps.hpp>

namespace dds::sub {

class Query {
 public:
  using const_iterator = std::vector<std::string>::const_iterator;

  Query(const dds::core::null_type&) : reader_(dds::core::null) {}  // NOLINT
  Query(const AnyDataReader& dr, const std::string& expression)
      : Query(dr, expression, std::vector<std::string>{}) {}
  template <typename FWIterator>
  Query(const AnyDataReader& dr, const std::string& expression, const FWIterator& params_begin,
        const FWIterator& params_end)
      : Query(dr, expression, std::vector<std::string>(params_begin, params_end)) {}
  Query(const AnyDataReader& dr, const std::string& expression,
        const std::vector<std::string>& params)
      : reader_(dr),
        filter_(spindle::detail::make_content_filter(dr.core().type(), expression, params, true,
                                                     true)) {}

  [[nodiscard]] bool is_nil() const noexcept { return filter_ == nullptr; }
  friend bool operator==(const Query& q, const dds::core::null_type&) noexcept {
    return q.is_nil();
  }
  friend bool operator==(const Query& a, const Query& b) noexcept { return a.filter_ == b.filter_; }

  [[nodiscard]] const std::string& expression() const { return checked().expression(); }
  // Replaces the expression; the parameters stay (checked as above).
  void expression(const std::string& expr) {
    filter_ = spindle::detail::make_content_filter(reader_.core().type(), expr,
                                                   checked().parameters(), true, true);
  }
  [[nodiscard]] std::vector<std::string> parameters() const { return checked().parameters(); }
  // The parameters, as a range: iterators stay valid until the parameters change.
  [[nodiscard]] const_iterator begin() const { return current().cbegin(); }
  [[nodiscard]] const_iterator end() const { return current().cend(); }
  template <typename FWIterator>
  void parameters(const FWIterator& begin, const FWIterator& end) {
    checked().parameters(std::vector<std::string>(begin, end));
  }
  void add_parameter(const std::string& param) {
    auto p = checked().parameters();
    p.push_back(param);
    filter_->parameters(p);
  }
  [[nodiscard]] std::uint32_t parameters_length() const {
    return static_cast<std::uint32_t>(checked().parameters().size());
  }
  [[nodiscard]] const AnyDataReader& data_reader() const noexcept { return reader_; }

  // Spindle: the compiled query, its parameters checked (InvalidArgumentError).
  [[nodiscard]] const std::shared_ptr<spindle::detail::ContentFilterCore>& spindle_filter() const {
    checked().use();
    return filter_;
  }

 private:
  // The parameters as a vector that stays put while they do (begin() and end() may be
  // called in either order).
  const std::vector<std::string>& current() const {
    auto p = checked().parameters();
    if (p != snapshot_) snapshot_ = std::move(p);
    return snapshot_;
  }
  [[nodiscard]] spindle::detail::ContentFilterCore& checked() const {
    if (!filter_) throw dds::core::NullReferenceError("dds::sub::Query: null reference");
    return *filter_;
  }

  AnyDataReader reader_;
  std::shared_ptr<spindle::detail::ContentFilterCore> filter_;
  mutable std::vector<std::string> snapshot_;  // what begin()/end() iterate
};

}  // namespace dds::sub
