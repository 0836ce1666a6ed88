#include "random_sample.hpp"

#include <algorithm>
#include <fstream>
#include <functional>
#include <limits>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>

namespace test_types {

using namespace spindle::types;

namespace {

template <class I>
I uniform(std::mt19937_64& rng, I lo, I hi) {
  return std::uniform_int_distribution<I>(lo, hi)(rng);
}

std::string utf8(uint32_t c) {
  std::string s;
  if (c < 0x80) {
    s.push_back(static_cast<char>(c));
  } else if (c < 0x800) {
    s.push_back(static_cast<char>(0xC0 | (c >> 6)));
    s.push_back(static_cast<char>(0x80 | (c & 0x3F)));
  } else if (c < 0x10000) {
    s.push_back(static_cast<char>(0xE0 | (c >> 12)));
    s.push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F)));
    s.push_back(static_cast<char>(0x80 | (c & 0x3F)));
  } else {
    s.push_back(static_cast<char>(0xF0 | (c >> 18)));
    s.push_back(static_cast<char>(0x80 | ((c >> 12) & 0x3F)));
    s.push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F)));
    s.push_back(static_cast<char>(0x80 | (c & 0x3F)));
  }
  return s;
}

Json label_json(const Type& disc, int64_t v) {
  const Type& d = resolve(disc);
  switch (d.kind) {
    case TypeKind::Boolean:
      return v != 0;
    case TypeKind::Char8:
    case TypeKind::Char16:
      return utf8(static_cast<uint32_t>(v));
    case TypeKind::Enum:
      for (const auto& e : d.enumerators)
        if (e.value == v) return e.name;
      return v;
    case TypeKind::UInt64:
      return static_cast<uint64_t>(v);
    default:
      return v;
  }
}

bool used(const Type& u, int64_t v) {
  for (const auto& c : u.cases)
    if (std::find(c.labels.begin(), c.labels.end(), v) != c.labels.end()) return true;
  return false;
}

std::optional<int64_t> free_label(const Type& u) {
  if (u.implicit_default) return u.implicit_default;
  const Type& d = resolve(*u.discriminator);
  if (d.kind == TypeKind::Enum) {
    for (const auto& e : d.enumerators)
      if (!used(u, e.value)) return e.value;
    return std::nullopt;
  }
  const int64_t limit = d.kind == TypeKind::Boolean ? 2 : 100000;
  for (int64_t i = 0; i < limit; ++i)
    if (!used(u, i)) return i;
  return std::nullopt;
}

int64_t as_int(const Literal& l) {
  if (const auto* i = std::get_if<int64_t>(&l)) return *i;
  if (const auto* u = std::get_if<uint64_t>(&l)) return static_cast<int64_t>(*u);
  if (const auto* d = std::get_if<long double>(&l)) return static_cast<int64_t>(*d);
  return 0;
}

Json in_range(const Member& m, std::mt19937_64& rng) {
  const TypeKind k = resolve(*m.type).kind;
  if (k == TypeKind::Float32 || k == TypeKind::Float64 || k == TypeKind::Float128) {
    const double lo = m.min ? static_cast<double>(std::get<long double>(*m.min)) : -100.0;
    const double hi = m.max ? static_cast<double>(std::get<long double>(*m.max)) : 100.0;
    const int step = uniform(rng, 0, 4);  // lo, hi and points between, all exact
    return lo + (hi - lo) * step / 4.0;
  }
  const int64_t lo = m.min ? as_int(*m.min) : -1000;
  const int64_t hi = m.max ? as_int(*m.max) : 1000;
  return uniform(rng, lo, hi);
}

}  // namespace

Json random_sample(const Type& type, std::mt19937_64& rng, int depth) {
  const Type& t = resolve(type);
  const bool deep = depth > 4;
  switch (t.kind) {
    case TypeKind::Boolean:
      return uniform(rng, 0, 1) == 1;
    case TypeKind::Byte:
    case TypeKind::UInt8:
      return uniform<uint64_t>(rng, 0, 255);
    case TypeKind::Int8:
      return uniform<int64_t>(rng, -128, 127);
    case TypeKind::Int16:
      return uniform<int64_t>(rng, -32768, 32767);
    case TypeKind::UInt16:
      return uniform<uint64_t>(rng, 0, 65535);
    case TypeKind::Int32:
      return uniform<int64_t>(rng, std::numeric_limits<int32_t>::min(),
                              std::numeric_limits<int32_t>::max());
    case TypeKind::UInt32:
      return uniform<uint64_t>(rng, 0, std::numeric_limits<uint32_t>::max());
    case TypeKind::Int64:
      return uniform<int64_t>(rng, std::numeric_limits<int64_t>::min(),
                              std::numeric_limits<int64_t>::max());
    case TypeKind::UInt64:
      return uniform<uint64_t>(rng, 0, std::numeric_limits<uint64_t>::max());
    case TypeKind::Float32:
    case TypeKind::Float64:
    case TypeKind::Float128:
      return static_cast<double>(uniform<int64_t>(rng, -100000, 100000)) / 64.0;
    case TypeKind::Char8:
      return std::string(1, static_cast<char>(uniform(rng, 32, 126)));
    case TypeKind::Char16: {
      static constexpr uint32_t kChars[] = {'A', 'z', 0xE9, 0x20AC, 0x4E2D};
      return utf8(kChars[uniform<size_t>(rng, 0, 4)]);
    }
    case TypeKind::String8: {
      const uint64_t max = t.bound == 0 ? 12 : std::min<uint64_t>(t.bound, 12);
      std::string s;
      for (uint64_t i = uniform<uint64_t>(rng, 0, max); i > 0; --i)
        s.push_back(static_cast<char>(uniform(rng, 'a', 'z')));
      return s;
    }
    case TypeKind::String16: {
      static constexpr uint32_t kChars[] = {'w', 'x', 0xE9, 0x20AC, 0x1F600};
      const uint64_t max = t.bound == 0 ? 8 : std::min<uint64_t>(t.bound, 8);
      std::string s;
      for (uint64_t i = uniform<uint64_t>(rng, 0, max); i > 0; --i)
        s += utf8(kChars[uniform<size_t>(rng, 0, 4)]);
      return s;
    }
    case TypeKind::Sequence: {
      const uint64_t max = deep ? 0 : t.bound == 0 ? 4 : std::min<uint64_t>(t.bound, 4);
      Json a = Json::array();
      for (uint64_t i = uniform<uint64_t>(rng, 0, max); i > 0; --i)
        a.push_back(random_sample(*t.element, rng, depth + 1));
      return a;
    }
    case TypeKind::Array: {
      std::function<Json(size_t)> level = [&](size_t l) {
        Json a = Json::array();
        for (uint32_t i = 0; i < t.dims[l]; ++i)
          a.push_back(l + 1 == t.dims.size() ? random_sample(*t.element, rng, depth + 1)
                                             : level(l + 1));
        return a;
      };
      return level(0);
    }
    case TypeKind::Map: {
      const uint64_t max = deep ? 0 : t.bound == 0 ? 3 : std::min<uint64_t>(t.bound, 3);
      Json o = Json::object();
      for (uint64_t i = uniform<uint64_t>(rng, 0, max); i > 0; --i) {
        const Json k = random_sample(*t.key, rng, depth + 1);
        const std::string text = k.is_string() ? k.get<std::string>() : k.dump();
        if (!o.contains(text)) o[text] = random_sample(*t.element, rng, depth + 1);
      }
      return o;
    }
    case TypeKind::Enum:
      return t.enumerators[uniform<size_t>(rng, 0, t.enumerators.size() - 1)].name;
    case TypeKind::Bitmask: {
      std::vector<BitFlag> flags = t.flags;
      std::sort(flags.begin(), flags.end(),
                [](const BitFlag& a, const BitFlag& b) { return a.position < b.position; });
      Json a = Json::array();
      for (const auto& f : flags)
        if (uniform(rng, 0, 1) == 1) a.push_back(f.name);
      return a;
    }
    case TypeKind::Bitset: {
      Json o = Json::object();
      for (const Bitfield* f : all_bitfields(t)) {
        if (f->name.empty()) continue;
        if (f->holder == TypeKind::Boolean) {
          o[f->name] = uniform(rng, 0, 1) == 1;
        } else if (f->holder == TypeKind::Int8 || f->holder == TypeKind::Int16 ||
                   f->holder == TypeKind::Int32 || f->holder == TypeKind::Int64) {
          const int64_t hi = f->width >= 64 ? std::numeric_limits<int64_t>::max()
                                            : (int64_t{1} << (f->width - 1)) - 1;
          o[f->name] = uniform<int64_t>(rng, -hi - 1, hi);
        } else {
          const uint64_t hi =
              f->width >= 64 ? std::numeric_limits<uint64_t>::max() : (uint64_t{1} << f->width) - 1;
          o[f->name] = uniform<uint64_t>(rng, 0, hi);
        }
      }
      return o;
    }
    case TypeKind::Struct: {
      Json o = Json::object();
      for (const Member* m : all_members(t)) {
        if (m->optional && uniform(rng, 0, 1) == 0) {
          o[m->name] = nullptr;
        } else if ((m->min || m->max) && !m->optional) {
          o[m->name] = in_range(*m, rng);
        } else {
          o[m->name] = random_sample(*m->type, rng, depth + 1);
        }
      }
      return o;
    }
    case TypeKind::Union: {
      Json o = Json::object();
      const size_t pick = uniform<size_t>(rng, 0, t.cases.size());  // == size: no member
      if (pick == t.cases.size()) {
        const auto f = free_label(t);
        bool selects_default = false;
        for (const auto& c : t.cases)
          selects_default = selects_default || c.is_default;
        if (f && !selects_default) {
          o["discriminator"] = label_json(*t.discriminator, *f);
          return o;
        }
        if (t.cases.empty()) return random_sample(type, rng, depth);  // no free value either
      }
      const UnionCase& c = t.cases[std::min(pick, t.cases.size() - 1)];
      int64_t d = 0;
      if (!c.labels.empty()) {
        d = c.labels[uniform<size_t>(rng, 0, c.labels.size() - 1)];
      } else {
        d = *free_label(t);
      }
      o["discriminator"] = label_json(*t.discriminator, d);
      o[c.member.name] = random_sample(*c.member.type, rng, depth + 1);
      return o;
    }
    default:
      return nullptr;
  }
}

bool same_json(const Json& a, const Json& b) {
  return nlohmann::json::parse(a.dump()) == nlohmann::json::parse(b.dump());
}

std::vector<std::byte> load_hex_file(const std::string& path) {
  std::ifstream in(path);
  if (!in.good()) throw std::runtime_error(path + ": cannot read");
  std::vector<std::byte> bytes;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream words(line);
    std::string hex;
    while (words >> hex)
      bytes.push_back(static_cast<std::byte>(std::stoul(hex, nullptr, 16)));
  }
  return bytes;
}

}  // namespace test_types
