// See ends.hpp, Batches.
#include <algorithm>
#include <unordered_map>

#include "ends.hpp"

namespace spindle::gateway {

std::vector<Message> Batches::add(std::vector<BatchItem>& batch, bool more) {
  std::unordered_map<int64_t, size_t> last;  // instance -> index of its last item
  for (size_t i = 0; i < batch.size(); ++i)
    last[batch[i].instance] = i;
  std::vector<Message> out;
  out.reserve(batch.size() + held_.size());
  // An instance seen again: its held end is carried by the newer samples' state instead.
  std::erase_if(held_, [&](const auto& h) { return last.count(h.first) != 0; });
  for (size_t i = 0; i < batch.size(); ++i) {
    BatchItem& b = batch[i];
    if (b.from_gateway) continue;
    if (!b.valid) {
      if (b.disposed || b.no_writers) {
        b.message.kind = b.disposed ? Message::Kind::Dispose : Message::Kind::Unregister;
        out.push_back(std::move(b.message));
      }
      continue;
    }
    b.message.kind = Message::Kind::Data;
    out.push_back(b.message);
    if (last[b.instance] == i && (b.disposed || b.no_writers)) {
      Message end = std::move(b.message);
      end.kind = b.disposed ? Message::Kind::Dispose : Message::Kind::Unregister;
      if (more)
        held_.emplace_back(b.instance, std::move(end));
      else
        out.push_back(std::move(end));
    }
  }
  if (!more) {
    for (auto& h : held_)
      out.push_back(std::move(h.second));
    held_.clear();
  }
  return out;
}

namespace {

bool is_marker(const std::string& user_data) {
  return user_data.rfind(kMarkerPrefix, 0) == 0;
}

}  // namespace

std::vector<std::string> End::gateway_writers(const std::string& topic) {
  std::vector<std::string> out;
  for (auto& p : publications())
    if (p.topic == topic && is_marker(p.user_data)) out.push_back(std::move(p.user_data));
  return out;
}

std::vector<std::pair<std::string, std::string>> End::application_topics() {
  std::vector<std::pair<std::string, std::string>> out;
  for (auto& p : publications())
    if (!is_marker(p.user_data)) out.emplace_back(std::move(p.topic), std::move(p.type));
  return out;
}

types::Json key_members(const types::Type& type, const types::Json& sample) {
  const types::Type& r = types::resolve(type);
  if (r.kind != types::TypeKind::Struct) return nullptr;
  types::Json out = types::Json::object();
  for (const auto& path : types::key_paths(r)) {
    const types::Json* from = &sample;
    types::Json* to = &out;
    for (const types::Member* m : path) {
      if (!from->is_object() || !from->contains(m->name)) break;
      from = &(*from)[m->name];
      to = &(*to)[m->name];
    }
    if (to != &out) *to = *from;
  }
  return out.empty() ? types::Json(nullptr) : out;
}

std::shared_ptr<const types::Json> full_value(const types::Type& type, const Message& m) {
  if (!m.bytes) return m.value;
  return std::make_shared<const types::Json>(types::decode(type, *m.bytes));
}

bool in_encoding(const std::vector<std::byte>& bytes, cdr::Encoding e) {
  if (bytes.size() < cdr::kEncapsulationSize) return false;
  const bool xcdr2 = static_cast<uint8_t>(bytes[1]) > 3;
  return xcdr2 == (e == cdr::Encoding::Xcdr2);
}

}  // namespace spindle::gateway
