// make_content_filter: a ContentFilteredTopic's filter or a QueryCondition's query
// (spindle/detail/dcps.hpp) over the filter language (filter/expression.hpp), with the
// language's FilterError turned into the dds::core exception the PSM promises.
#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include <dds/core/Exception.hpp>
#include <spindle/detail/dcps.hpp>

#include "filter/expression.hpp"

namespace spindle::detail {

namespace {

class ContentFilter final : public ContentFilterCore {
 public:
  ContentFilter(filter::Expression e, bool defer)
      : expression_(e.expression()),
        program_(std::make_shared<const filter::Expression>(std::move(e))),
        used_(!defer) {}

  const std::string& expression() const override { return expression_; }
  std::vector<std::string> parameters() const override {
    const auto p = program_.load();
    return {p->parameters().begin(), p->parameters().end()};
  }
  void parameters(const std::vector<std::string>& params) override {
    std::lock_guard lock(set_mu_);  // one writer at a time: no update is lost
    const auto binding = used_ ? filter::Binding::now : filter::Binding::later;
    replace([&](filter::Expression& e) { e.set_parameters(params, binding); });
  }
  void use() override {
    std::lock_guard lock(set_mu_);
    // On failure it stays deferred: the application may complete the parameters.
    if (!program_.load()->bound()) replace([](filter::Expression& e) { e.bind(); });
    used_ = true;
  }
  bool matches(const void* sample) const override { return program_.load()->matches(sample); }
  bool ordered() const override { return !program_.load()->order_by().empty(); }
  bool before(const void* a, const void* b) const override {
    return program_.load()->order(a, b) < 0;
  }

 private:
  // A changed copy of the program takes its place (set_mu_ held); InvalidArgumentError,
  // and the program as it was, when `change` fails.
  template <class Change>
  void replace(Change change) {
    auto next = std::make_shared<filter::Expression>(*program_.load());
    try {
      change(*next);
    } catch (const filter::FilterError& e) {
      throw dds::core::InvalidArgumentError(e.what());
    }
    program_.store(std::move(next));
  }

  const std::string expression_;
  std::atomic<std::shared_ptr<const filter::Expression>> program_;
  std::mutex set_mu_;
  bool used_;  // set_mu_: parameters are checked when set (else at use())
};

}  // namespace

std::shared_ptr<ContentFilterCore> make_content_filter(const TypeSupport& type,
                                                       const std::string& expression,
                                                       const std::vector<std::string>& parameters,
                                                       bool query, bool defer) {
  const reflect::StructInfo* info = type.reflect == nullptr ? nullptr : type.reflect();
  if (info == nullptr) {
    std::string msg = "content filter on type '";
    msg += type.type_name;
    msg += "': the type has no member tables (generate it with this release's idlc)";
    throw dds::core::UnsupportedError(msg);
  }
  try {
    return std::make_shared<ContentFilter>(
        filter::Expression::compile(expression, *info, parameters,
                                    query ? filter::Grammar::query : filter::Grammar::filter,
                                    defer ? filter::Binding::later : filter::Binding::now),
        defer);
  } catch (const filter::FilterError& e) {
    throw dds::core::InvalidArgumentError(e.what());
  }
}

}  // namespace spindle::detail
