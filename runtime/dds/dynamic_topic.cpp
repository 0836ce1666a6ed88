// Topics of types known only at run time (dynamic_topic.hpp): a TypeSupport table whose
// functions encode and decode DynamicSample values through the dynamic codec.
#include <spindle/types/dynamic_topic.hpp>
#include <spindle/types/type_object.hpp>

#include <cstring>
#include <deque>
#include <map>
#include <mutex>

namespace spindle::types {

namespace {

using spindle::detail::TypeSupport;

const DynamicSample& sample_of(const void* s) {
  return *static_cast<const DynamicSample*>(s);
}

// The sample's bytes in encoding `e`: its own `encoded` where they are in `e`, else those
// the last size() of this thread made for this very sample (a write asks for the size, then
// for the bytes: one encode, not two), else freshly encoded. Throws as encode().
struct LastEncoded {
  const void* sample = nullptr;
  cdr::Encoding encoding = cdr::Encoding::Xcdr1;
  std::vector<std::byte> bytes;
};
thread_local LastEncoded t_last;

bool in_encoding(const std::vector<std::byte>& bytes, cdr::Encoding e) {
  if (bytes.size() < cdr::kEncapsulationSize) return false;
  const bool xcdr2 = static_cast<std::uint8_t>(bytes[1]) > 3;
  return xcdr2 == (e == cdr::Encoding::Xcdr2);
}

std::span<const std::byte> bytes_of(const void* s, cdr::Encoding e, bool for_size) {
  const auto& d = sample_of(s);
  if (d.encoded && in_encoding(*d.encoded, e)) return *d.encoded;
  if (!for_size && t_last.sample == s && t_last.encoding == e) {
    t_last.sample = nullptr;  // once: the next write of this address is another sample
    return t_last.bytes;
  }
  t_last.bytes = encode(*d.type, d.value, e);
  t_last.sample = for_size ? s : nullptr;
  t_last.encoding = e;
  return t_last.bytes;
}

// Tables live as long as the program: topics refer to them by reference, and a table is a
// few dozen bytes per create_topic().
// One table per type, so that two topics of one dynamic type are one topic.
struct Tables {
  std::mutex mu;
  std::deque<std::string> names;
  std::deque<std::vector<std::uint8_t>> type_info;  // information, mapping, ...
  std::deque<TypeSupport> tables;
  std::map<std::pair<const Type*, Decoding>, const TypeSupport*> by_type;
};
Tables& tables() {
  static Tables t;
  return t;
}

template <Decoding D>
std::shared_ptr<const void> decode_sample(const TypeSupport& self, std::span<const std::byte> in,
                                          std::string& error) {
  const auto* of = static_cast<const Type*>(self.context);
  try {
    auto sample = std::make_shared<DynamicSample>();
    sample->type = of;
    sample->value = D == Decoding::full ? decode(*of, in) : decode_key_of(*of, in);
    sample->encoded = std::make_shared<const std::vector<std::byte>>(in.begin(), in.end());
    return sample;
  } catch (const DataError& err) {
    error = err.what();
    return nullptr;
  }
}

}  // namespace

const TypeSupport& type_support(const Type& type, Decoding decoding) {
  const Type& r = resolve(type);
  if (r.kind != TypeKind::Struct && r.kind != TypeKind::Union) {
    throw std::invalid_argument("type '" + type.name + "' is a " + to_string(r.kind) +
                                ", not a struct or union: it cannot be a topic's type");
  }
  auto& t = tables();
  std::lock_guard lock(t.mu);
  if (const auto it = t.by_type.find({&r, decoding});
      it != t.by_type.end() && it->second->type_name == r.name)
    return *it->second;
  const std::string& name = t.names.emplace_back(r.name);
  const TypeInfo info = make_type_info(r);
  auto as_bytes = [&](const std::vector<std::byte>& v) -> std::span<const std::uint8_t> {
    auto& kept = t.type_info.emplace_back(v.size());
    std::memcpy(kept.data(), v.data(), v.size());
    return kept;
  };
  const auto information = as_bytes(info.information);
  const auto mapping = as_bytes(info.mapping);
  TypeSupport table{
      name,
      !key_paths(r).empty(),
      cdr::kUnbounded,
      r.representations,
      default_encoding(r),
      [](const void* s, cdr::Encoding e) {
        try {
          return bytes_of(s, e, true).size();
        } catch (const DataError& err) {
          throw cdr::CodecError(err.status(), err.what());
        }
      },
      [](const void* s, std::span<std::byte> out, cdr::Encoding e) -> cdr::Result {
        try {
          const auto bytes = bytes_of(s, e, false);
          if (bytes.size() > out.size())
            return {cdr::Status::BufferTooSmall, 0, "sample larger than its slot"};
          std::memcpy(out.data(), bytes.data(), bytes.size());
          return {cdr::Status::Ok, bytes.size(), {}};
        } catch (const DataError& err) {
          return {err.status(), 0, err.what()};
        } catch (const std::invalid_argument& err) {
          return {cdr::Status::BadEncapsulation, 0, err.what()};
        }
      },
      [](const void* s) {
        const auto& d = sample_of(s);
        return key_hash(*d.type, d.value);
      },
      decoding == Decoding::full ? &decode_sample<Decoding::full>
                                 : &decode_sample<Decoding::key_only>,
      0,
      nullptr,
      nullptr,
      &r,
      information,
      mapping,
  };
  const TypeSupport& made = t.tables.emplace_back(table);
  t.by_type[{&r, decoding}] = &made;
  return made;
}

dds::topic::Topic<DynamicSample> create_topic(const dds::domain::DomainParticipant& dp,
                                              const std::string& name, const Type& type,
                                              const dds::topic::qos::TopicQos& qos) {
  return dds::topic::Topic<DynamicSample>(dp.core().create_topic(name, type_support(type), qos));
}

dds::topic::Topic<DynamicSample> create_topic(const dds::domain::DomainParticipant& dp,
                                              const std::string& name, const Type& type,
                                              const dds::topic::qos::TopicQos& qos,
                                              Decoding decoding) {
  return dds::topic::Topic<DynamicSample>(
      dp.core().create_topic(name, type_support(type, decoding), qos));
}

dds::topic::Topic<DynamicSample> create_topic(const dds::domain::DomainParticipant& dp,
                                              const std::string& name, const Type& type) {
  return create_topic(dp, name, type, dp.default_topic_qos());
}

const Type* discovered_type(const dds::domain::DomainParticipant& dp, const std::string& topic_name,
                            TypeLibrary& library) {
  for (const auto& t : dp.core().discovered_topics()) {
    if (t.name != topic_name || t.type_information.empty()) continue;
    return load_type_info(library, std::as_bytes(std::span(t.type_information)),
                          std::as_bytes(std::span(t.type_mapping)));
  }
  // A topic of this participant's own.
  if (const auto own = dp.core().find_topic(topic_name);
      own && !own->type().type_information.empty()) {
    return load_type_info(library, std::as_bytes(own->type().type_information),
                          std::as_bytes(own->type().type_mapping));
  }
  return nullptr;
}

}  // namespace spindle::types
