// dds::sub::cond::QueryCondition: a ReadCondition that also filters by content (DDS-PSM-Cxx
// §7.5.5, DCPS §2.2.2.5.9): it is true while its reader holds a valid sample in the given
// states that passes its Query; `reader.select().condition(qc).take()` takes exactly those.
// The query is shared with the Query it was made from: changing the parameters of either
// changes both.
//
// Threading: references may be copied and used from any thread.
#pragma once

#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <dds/core/Exception.hpp>
#include <dds/sub/Query.hpp>
#include <dds/sub/cond/ReadCondition.hpp>
#include <dds/sub/status/DataState.hpp>

namespace dds::sub::cond {

class QueryCondition : public ReadCondition {
 public:
  QueryCondition(const dds::core::null_type& n) : ReadCondition(n) {}  // NOLINT
  QueryCondition(const dds::sub::Query& query, const dds::sub::status::DataState& state)
      : ReadCondition(make(query, state)), query_(std::make_shared<dds::sub::Query>(query)) {}
  template <typename Functor>
  QueryCondition(const dds::sub::Query& query, const dds::sub::status::DataState& state,
                 Functor functor)
      : QueryCondition(query, state) {
    if constexpr (std::is_invocable_v<Functor&, dds::sub::AnyDataReader&>) {
      checked().set_handler([func = std::move(functor),
                             reader = query.data_reader()](auto&) mutable { func(reader); });
    } else {
      handler(std::move(functor));
    }
  }

  [[nodiscard]] const std::string& expression() const { return query().expression(); }
  [[nodiscard]] std::vector<std::string> parameters() const { return query().parameters(); }
  template <typename FWIterator>
  void parameters(const FWIterator& begin, const FWIterator& end) {
    query().parameters(begin, end);
    checked().source_changed();  // the trigger may differ with the new parameters
  }
  [[nodiscard]] dds::sub::Query& query() const {
    if (!query_) throw dds::core::NullReferenceError("QueryCondition: null reference");
    return *query_;
  }

 private:
  static std::shared_ptr<delegate_type> make(const dds::sub::Query& query,
                                             const dds::sub::status::DataState& state) {
    const auto& reader = query.data_reader();
    if (reader.is_nil()) throw dds::core::NullReferenceError("QueryCondition: null reader");
    auto cache = reader.spindle_history_cache();
    auto filter = query.spindle_filter();
    return std::make_shared<delegate_type>(
        std::move(cache), state, reader.delegate(),
        [filter](const void* data) { return data != nullptr && filter->matches(data); });
  }
  std::shared_ptr<dds::sub::Query> query_;
};

}  // namespace dds::sub::cond
