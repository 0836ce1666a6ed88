// dds::sub::cond::ReadCondition: a condition that is true while its DataReader holds a
// sample (valid or not) whose sample/view/instance states match a DataState mask
// (DDS-PSM-Cxx §7.5.5, DCPS §2.2.2.5.8). It watches the reader's history cache: every
// insert, read and take notifies it, and its trigger is computed from the cache's
// per-state counts, so it is exact and cheap.
//
// Works with any reader type R that derives from dds::core::Entity and exposes
//   std::shared_ptr<spindle::dcps::HistoryCache> R::spindle_history_cache() const;
// (spindle::detail::ReaderWithHistoryCache). A handler may take nothing, the
// ReadCondition, the Condition, or the reader (`void f(dds::sub::DataReader<T>&)`).
//
// Threading: references may be copied and used from any thread.
#pragma once

#include <concepts>
#include <memory>
#include <type_traits>
#include <utility>

#include <dds/core/Entity.hpp>
#include <dds/core/Exception.hpp>
#include <dds/core/cond/Condition.hpp>
#include <dds/core/types.hpp>
#include <dds/sub/status/DataState.hpp>
#include <spindle/detail/condition_delegate.hpp>

namespace dds::sub {
class AnyDataReader;
}

namespace spindle::detail {

template <class R>
concept ReaderWithHistoryCache = std::derived_from<R, dds::core::Entity> && requires(const R& r) {
  {
    r.spindle_history_cache()
    } -> std::convertible_to<std::shared_ptr<spindle::dcps::HistoryCache>>;
};

}  // namespace spindle::detail

namespace dds::sub::cond {

class ReadCondition : public dds::core::cond::Condition {
 public:
  using delegate_type = spindle::detail::ReadConditionDelegate;

  ReadCondition(const dds::core::null_type& n) : Condition(n) {}  // NOLINT
  template <spindle::detail::ReaderWithHistoryCache Reader>
  ReadCondition(const Reader& reader, const dds::sub::status::DataState& state)
      : Condition(make(reader, state)) {}
  template <spindle::detail::ReaderWithHistoryCache Reader, typename Functor>
  ReadCondition(const Reader& reader, const dds::sub::status::DataState& state, Functor functor)
      : ReadCondition(reader, state) {
    if constexpr (std::is_invocable_v<Functor&, Reader&>) {
      checked().set_handler([func = std::move(functor), reader](auto&) mutable {
        Reader r = reader;
        func(r);
      });
    } else {
      handler(std::move(functor));
    }
  }
  explicit ReadCondition(std::shared_ptr<delegate_type> delegate)
      : Condition(std::move(delegate)) {}
  // The ReadCondition `c` refers to; throws IllegalOperationError if it is another kind.
  ReadCondition(
      const Condition& c)  // NOLINT(google-explicit-constructor): `ReadCondition x = cond;`
      : Condition(downcast<delegate_type>(c)) {}
  // Assignment from a Condition (or dds::core::null), checked the same way.
  ReadCondition& operator=(const Condition& c) { return *this = ReadCondition(c); }
  ReadCondition& operator=(const dds::core::null_type& n) { return *this = ReadCondition(n); }

  // The mask given at creation.
  [[nodiscard]] const dds::sub::status::DataState& state_filter() const {
    return read().state_filter();
  }
  // The reader, as the PSM's AnyDataReader (which must be constructible from a
  // dds::core::Entity), or as any other type constructible from one.
  template <class AnyReader = dds::sub::AnyDataReader>
  [[nodiscard]] AnyReader data_reader() const {
    return AnyReader(reader_entity());
  }
  // Spindle: the reader as a plain entity.
  [[nodiscard]] dds::core::Entity reader_entity() const {
    return dds::core::Entity(read().reader());
  }

  template <typename Functor>
  void handler(Functor func) {
    checked().set_handler(adapt<ReadCondition>(std::move(func)));
  }

 private:
  template <class Reader>
  static std::shared_ptr<delegate_type> make(const Reader& reader,
                                             const dds::sub::status::DataState& state) {
    const dds::core::Entity& entity = reader;
    if (entity.is_nil()) throw dds::core::NullReferenceError("ReadCondition: null reader");
    std::shared_ptr<spindle::dcps::HistoryCache> cache = reader.spindle_history_cache();
    if (!cache) throw dds::core::AlreadyClosedError("ReadCondition: the reader has no cache");
    return std::make_shared<delegate_type>(std::move(cache), state, entity.delegate());
  }
  [[nodiscard]] delegate_type& read() const { return static_cast<delegate_type&>(checked()); }
};

}  // namespace dds::sub::cond
