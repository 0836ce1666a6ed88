// dds::topic::ContentFilteredTopic<T>: a topic seen through a filter (DDS-PSM-Cxx §7.5.2.3,
// DCPS §2.2.2.3.3). A DataReader made on it reads the related topic and keeps only the data
// samples that pass the filter — an expression of DDS 1.4 annex B over T's members with
// %n parameters (docs/filters.md); disposes and unregistrations always pass. The
// expression is checked against T when the ContentFilteredTopic is made: a bad one throws
// InvalidArgumentError naming the column. The parameters may change afterwards; readers
// apply the new ones to the samples that arrive next.
//
// Threading: a reference; every operation may be called from any thread.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <dds/core/Exception.hpp>
#include <dds/topic/Filter.hpp>
#include <dds/topic/Topic.hpp>
#include <dds/topic/TopicDescription.hpp>
#include <spindle/detail/dcps.hpp>
#include <spindle/detail/type_support.hpp>

namespace dds::topic {

template <typename T>
class ContentFilteredTopic : public TopicDescription {
 public:
  using Core = spindle::detail::FilteredTopicCore;

  ContentFilteredTopic(const dds::core::null_type& n) : TopicDescription(n) {}  // NOLINT
  ContentFilteredTopic(const Topic<T>& topic, const std::string& name, const Filter& filter)
      : TopicDescription(make(topic, name, filter)) {}

  [[nodiscard]] const std::string& filter_expression() const {
    return filtered().filter()->expression();
  }
  [[nodiscard]] std::vector<std::string> filter_parameters() const {
    return filtered().filter()->parameters();
  }
  template <typename FWDIterator>
  void filter_parameters(const FWDIterator& begin, const FWDIterator& end) {
    filtered().filter()->parameters(std::vector<std::string>(begin, end));
  }
  [[nodiscard]] Filter filter() const { return Filter(filter_expression(), filter_parameters()); }
  [[nodiscard]] Topic<T> topic() const { return Topic<T>(filtered().topic()); }

  [[nodiscard]] Core& filtered() const { return static_cast<Core&>(this->checked()); }
  [[nodiscard]] std::shared_ptr<Core> filtered_ptr() const {
    (void)this->checked();
    return std::static_pointer_cast<Core>(this->delegate());
  }

 private:
  static std::shared_ptr<Core> make(const Topic<T>& topic, const std::string& name,
                                    const Filter& filter) {
    if (name.empty()) {
      throw dds::core::InvalidArgumentError("ContentFilteredTopic: a name is required");
    }
    auto core = topic.core_ptr();
    auto f = spindle::detail::make_content_filter(core->type(), filter.expression(),
                                                  filter.parameter_list(), false);
    return std::make_shared<Core>(std::move(core), name, std::move(f));
  }
};

}  // namespace dds::topic
