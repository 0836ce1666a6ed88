// Human-readable printing of generated IDL types (`std::cout << sample`). idlc emits one
// operator<< per struct/union that calls print_member for each member; the overloads here
// handle strings, sequences, arrays and optionals; enums and bitmasks have generated
// operator<< overloads found by ADL.
//
// Threading: free functions; no shared state.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <ostream>
#include <string>
#include <type_traits>
#include <vector>

namespace spindle {

// All overloads are declared first so that nested containers find each other.
template <class T>
void print_value(std::ostream& os, const T& v);
template <class T, class A>
void print_value(std::ostream& os, const std::vector<T, A>& v);
template <class T, size_t N>
void print_value(std::ostream& os, const std::array<T, N>& v);
template <class T>
void print_value(std::ostream& os, const std::optional<T>& v);
template <class K, class V, class C, class A>
void print_value(std::ostream& os, const std::map<K, V, C, A>& v);

namespace detail {
inline void print_wide(std::ostream& os, const std::wstring& s) {
  os << "L\"";
  for (wchar_t c : s) {
    if (c >= 0x20 && c < 0x7F) {
      os << static_cast<char>(c);
    } else {
      os << "\\u{" << std::hex << static_cast<uint32_t>(c) << std::dec << '}';
    }
  }
  os << '"';
}
template <class Range>
void print_range(std::ostream& os, const Range& r) {
  os << '[';
  const char* sep = "";
  size_t shown = 0;
  for (const auto& e : r) {
    if (++shown > 16) {  // a 10 KB payload is not worth printing whole
      os << ", … (" << r.size() << " elements)";
      break;
    }
    os << sep;
    print_value(os, e);
    sep = ", ";
  }
  os << ']';
}
}  // namespace detail

template <class T>
void print_value(std::ostream& os, const T& v) {
  if constexpr (std::is_same_v<T, bool>) {
    os << (v ? "true" : "false");
  } else if constexpr (std::is_same_v<T, char>) {
    os << '\'' << v << '\'';
  } else if constexpr (std::is_same_v<T, wchar_t>) {
    os << "L'\\u{" << std::hex << static_cast<uint32_t>(v) << std::dec << "}'";
  } else if constexpr (std::is_same_v<T, int8_t> || std::is_same_v<T, uint8_t>) {
    os << static_cast<int>(v);
  } else if constexpr (std::is_same_v<T, std::string>) {
    os << '"' << v << '"';
  } else if constexpr (std::is_same_v<T, std::wstring>) {
    detail::print_wide(os, v);
  } else {
    os << v;
  }
}
template <class T, class A>
void print_value(std::ostream& os, const std::vector<T, A>& v) {
  detail::print_range(os, v);
}
template <class T, size_t N>
void print_value(std::ostream& os, const std::array<T, N>& v) {
  detail::print_range(os, v);
}
template <class K, class V, class C, class A>
void print_value(std::ostream& os, const std::map<K, V, C, A>& v) {
  os << '{';
  const char* sep = "";
  size_t shown = 0;
  for (const auto& [key, value] : v) {
    if (++shown > 16) {
      os << ", … (" << v.size() << " entries)";
      break;
    }
    os << sep;
    print_value(os, key);
    os << ": ";
    print_value(os, value);
    sep = ", ";
  }
  os << '}';
}
template <class T>
void print_value(std::ostream& os, const std::optional<T>& v) {
  if (v) {
    print_value(os, *v);
  } else {
    os << "null";
  }
}

template <class T>
void print_member(std::ostream& os, const char* name, const T& v, bool first = false) {
  os << (first ? "" : ", ") << name << ": ";
  print_value(os, v);
}

}  // namespace spindle
