// The endpoint table (see endpoint_table.hpp).
#include "discovery/endpoint_table.hpp"

#include "qos/checks.hpp"

namespace spindle::discovery {

std::optional<std::vector<dds::core::policy::QosPolicyId>> match_policies(const WriterRecord& w,
                                                                          const ReaderRecord& r) {
  if (w.type_name != r.type_name) return std::nullopt;
  if (!qos::partitions_match(w.publisher_qos.policy<dds::core::policy::Partition>(),
                             r.subscriber_qos.policy<dds::core::policy::Partition>())) {
    return std::nullopt;
  }
  return qos::incompatible_policies(w.publisher_qos, w.qos, r.subscriber_qos, r.qos);
}

void EndpointTable::match(const WriterRecord& w, const ReaderRecord& r, std::vector<Change>& out) {
  const bool lw = is_local_(w.guid);
  const bool lr = is_local_(r.guid);
  if (!lw && !lr) return;  // neither is ours: their own participants match them
  auto ids = match_policies(w, r);
  if (!ids) return;
  if (!ids->empty()) {
    out.push_back(Change{Change::Kind::incompatible, w.guid, r.guid, lw, lr, std::move(*ids)});
    return;
  }
  if (!matched_.emplace(w.guid, r.guid).second) return;
  out.push_back(Change{Change::Kind::matched, w.guid, r.guid, lw, lr, {}});
}

std::vector<Change> EndpointTable::add(WriterRecord rec) {
  std::vector<Change> out;
  const WriterRecord& w = writers_.insert_or_assign(rec.guid, std::move(rec)).first->second;
  for (const auto& [rg, r] : readers_)
    if (r.topic_name == w.topic_name) match(w, r, out);
  return out;
}

std::vector<Change> EndpointTable::add(ReaderRecord rec) {
  std::vector<Change> out;
  const ReaderRecord& r = readers_.insert_or_assign(rec.guid, std::move(rec)).first->second;
  for (const auto& [wg, w] : writers_)
    if (w.topic_name == r.topic_name) match(w, r, out);
  return out;
}

std::vector<Change> EndpointTable::retire(std::uint64_t guid, bool writer) {
  std::vector<Change> out;
  if (writer) {
    writers_.erase(guid);
  } else {
    readers_.erase(guid);
  }
  for (auto it = matched_.begin(); it != matched_.end();) {
    const auto [wg, rg] = *it;
    if ((writer ? wg : rg) != guid) {
      ++it;
      continue;
    }
    it = matched_.erase(it);
    out.push_back(Change{Change::Kind::unmatched, wg, rg, is_local_(wg), is_local_(rg), {}});
  }
  return out;
}

std::vector<Change> EndpointTable::retire_if(const std::function<bool(std::uint64_t)>& belongs) {
  std::vector<std::pair<std::uint64_t, bool>> gone;
  for (const auto& [g, w] : writers_)
    if (belongs(g)) gone.emplace_back(g, true);
  for (const auto& [g, r] : readers_)
    if (belongs(g)) gone.emplace_back(g, false);
  std::vector<Change> out;
  for (auto [g, is_writer] : gone) {
    auto c = retire(g, is_writer);
    out.insert(out.end(), c.begin(), c.end());
  }
  return out;
}

const WriterRecord* EndpointTable::writer(std::uint64_t guid) const {
  auto it = writers_.find(guid);
  return it == writers_.end() ? nullptr : &it->second;
}

const ReaderRecord* EndpointTable::reader(std::uint64_t guid) const {
  auto it = readers_.find(guid);
  return it == readers_.end() ? nullptr : &it->second;
}

std::vector<std::uint64_t> EndpointTable::readers_of(std::uint64_t writer) const {
  std::vector<std::uint64_t> out;
  for (auto it = matched_.lower_bound({writer, 0}); it != matched_.end() && it->first == writer;
       ++it)
    out.push_back(it->second);
  return out;
}

}  // namespace spindle::discovery
