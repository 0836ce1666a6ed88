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

}  // namespace spindle::gateway
