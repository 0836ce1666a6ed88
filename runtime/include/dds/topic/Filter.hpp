// dds::topic::Filter: the filter expression of a ContentFilteredTopic and its %n parameters
// (DDS-PSM-Cxx §7.5.2.3). The expression language is DDS 1.4 annex B (docs/filters.md);
// a Filter is only text here — it is checked against the topic type when the
// ContentFilteredTopic is made.
//
// Threading: a value type; not shared.
#pragma once

#include <cstdint>
#include <iterator>
#include <string>
#include <vector>

namespace dds::topic {

class Filter {
 public:
  using iterator = std::vector<std::string>::iterator;
  using const_iterator = std::vector<std::string>::const_iterator;

  Filter(const std::string& query_expression)  // NOLINT(google-explicit-constructor)
      : expression_(query_expression) {}
  template <typename FWIterator>
  Filter(const std::string& query_expression, const FWIterator& params_begin,
         const FWIterator& params_end)
      : expression_(query_expression), parameters_(params_begin, params_end) {}
  Filter(const std::string& query_expression, const std::vector<std::string>& params)
      : expression_(query_expression), parameters_(params) {}

  [[nodiscard]] const std::string& expression() const noexcept { return expression_; }

  [[nodiscard]] const_iterator begin() const noexcept { return parameters_.begin(); }
  [[nodiscard]] const_iterator end() const noexcept { return parameters_.end(); }
  iterator begin() noexcept { return parameters_.begin(); }
  iterator end() noexcept { return parameters_.end(); }

  template <typename FWIterator>
  void parameters(const FWIterator& begin, const FWIterator& end) {
    parameters_.assign(begin, end);
  }
  void add_parameter(const std::string& param) { parameters_.push_back(param); }
  [[nodiscard]] std::uint32_t parameters_length() const noexcept {
    return static_cast<std::uint32_t>(parameters_.size());
  }
  // Spindle: the parameters as one vector.
  [[nodiscard]] const std::vector<std::string>& parameter_list() const noexcept {
    return parameters_;
  }

 private:
  std::string expression_;
  std::vector<std::string> parameters_;
};

}  // namespace dds::topic
