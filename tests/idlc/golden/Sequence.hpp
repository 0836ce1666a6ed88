// Generated from Sequence.idl by idlc 0.1.0 (Spindle DDS) — do not edit.
#pragma once

#include <spindle/cdr/codec.hpp>
#include <spindle/reflect.hpp>
#include <spindle/topic_traits.hpp>

#include <algorithm>
#include <array>
#include <cstdint>
#include <iosfwd>
#include <limits>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

namespace Bench {

class Sequence {
 public:
  Sequence() = default;
  Sequence(uint32_t writer_id, uint64_t seq, uint64_t send_time_ns, std::vector<uint8_t> payload)
      : writer_id_(std::move(writer_id)),
        seq_(std::move(seq)),
        send_time_ns_(std::move(send_time_ns)),
        payload_(std::move(payload)) {}

  uint32_t writer_id() const { return writer_id_; }
  uint32_t& writer_id() { return writer_id_; }
  void writer_id(uint32_t value) { writer_id_ = value; }
  uint64_t seq() const { return seq_; }
  uint64_t& seq() { return seq_; }
  void seq(uint64_t value) { seq_ = value; }
  uint64_t send_time_ns() const { return send_time_ns_; }
  uint64_t& send_time_ns() { return send_time_ns_; }
  void send_time_ns(uint64_t value) { send_time_ns_ = value; }
  const std::vector<uint8_t>& payload() const { return payload_; }
  std::vector<uint8_t>& payload() { return payload_; }
  void payload(const std::vector<uint8_t>& value) { payload_ = value; }
  void payload(std::vector<uint8_t>&& value) { payload_ = std::move(value); }

  bool operator==(const Sequence&) const = default;

 private:
  uint32_t writer_id_{};
  uint64_t seq_{};
  uint64_t send_time_ns_{};
  std::vector<uint8_t> payload_{};
};
std::ostream& operator<<(std::ostream& os, const Sequence& v);

}  // namespace Bench

namespace spindle::cdr {

template <>
struct Codec<::Bench::Sequence> {
  static constexpr Extensibility kExtensibility = Extensibility::Appendable;
  static constexpr uint8_t kRepresentations = 3;
  static constexpr Encoding kEncoding = Encoding::Xcdr1;
  static constexpr size_t kMinSize = 24;
  template <class W>
  static void write(W& w, const ::Bench::Sequence& v);
  template <class R>
  static void read(R& r, ::Bench::Sequence& v);
  template <Encoding E = Encoding::Xcdr1>
  static constexpr size_t max_size(size_t off);
  template <class W>
  static void write_key(W& w, const ::Bench::Sequence& v);
  static constexpr size_t key_max_size(size_t off);
};

template <class W>
void Codec<::Bench::Sequence>::write(W& w, const ::Bench::Sequence& v) {
  w.put(v.writer_id());
  w.put(v.seq());
  w.put(v.send_time_ns());
  w.template put<Seq<0>>(v.payload(), "Bench::Sequence.payload");
}

template <class R>
void Codec<::Bench::Sequence>::read(R& r, ::Bench::Sequence& v) {
  r.get(v.writer_id());
  r.get(v.seq());
  r.get(v.send_time_ns());
  r.template get<Seq<0>>(v.payload());
}

template <Encoding E>
constexpr size_t Codec<::Bench::Sequence>::max_size(size_t off) {
  off = max_size_at<Plain, uint32_t, E>(off);
  off = max_size_at<Plain, uint64_t, E>(off);
  off = max_size_at<Plain, uint64_t, E>(off);
  off = max_size_at<Seq<0>, std::vector<uint8_t>, E>(off);
  return off;
}

template <class W>
void Codec<::Bench::Sequence>::write_key(W& w, const ::Bench::Sequence& v) {
  w.put(v.writer_id());
}

constexpr size_t Codec<::Bench::Sequence>::key_max_size(size_t off) {
  off = max_size_at<Plain, uint32_t>(off);
  return off;
}

}  // namespace spindle::cdr

namespace spindle {

template <>
struct topic_traits<::Bench::Sequence> : topic_traits_base<::Bench::Sequence> {
  static constexpr std::string_view type_name = "Bench::Sequence";
  static constexpr bool is_keyed = true;
  static constexpr size_t key_count = 1;
};

}  // namespace spindle

namespace spindle::reflect {

template <>
struct Reflect<::Bench::Sequence> {
  static const StructInfo& info();
};

}  // namespace spindle::reflect
