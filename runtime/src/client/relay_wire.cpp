// The client link's frames (see relay_wire.hpp).
#include "client/relay_wire.hpp"

namespace spindle::client {

namespace {
constexpr std::size_t kMaxText = 4096;         // a refusal's, a halt's, a suspicion's reason
constexpr std::size_t kMaxViewYaml = 1 << 20;  // as the join protocol's welcome
constexpr std::size_t kMaxSettings = 64;
constexpr std::size_t kMaxSettingText = 256;
// A DELIVER message's fixed fields: subgroup, sender, rank, index, seq, flags, lost_before,
// listened, the payload's length.
constexpr std::size_t kDeliveredFixed = 4 + 4 + 4 + 8 + 8 + 4 + 8 + 1 + 8;
}  // namespace

std::string_view to_string(FrameType t) noexcept {
  switch (t) {
    case FrameType::hello:
      return "HELLO";
    case FrameType::welcome:
      return "WELCOME";
    case FrameType::refused:
      return "REFUSED";
    case FrameType::deliver:
      return "DELIVER";
    case FrameType::view:
      return "VIEW";
    case FrameType::lost:
      return "LOST";
    case FrameType::halt:
      return "HALT";
    case FrameType::acked:
      return "ACKED";
    case FrameType::publish:
      return "PUBLISH";
    case FrameType::want:
      return "WANT";
    case FrameType::bye:
      return "BYE";
  }
  return "an unknown frame";
}

FrameWriter::FrameWriter(FrameType t) {
  out_.resize(kFrameHead);
  out_[4] = static_cast<std::byte>(t);
}

void FrameWriter::u32(std::uint32_t v) {
  for (int i = 0; i < 4; ++i)
    out_.push_back(static_cast<std::byte>((v >> (8 * i)) & 0xff));
}

void FrameWriter::u64(std::uint64_t v) {
  for (int i = 0; i < 8; ++i)
    out_.push_back(static_cast<std::byte>((v >> (8 * i)) & 0xff));
}

void FrameWriter::str(std::string_view s) {
  u32(static_cast<std::uint32_t>(s.size()));
  const auto* p = reinterpret_cast<const std::byte*>(s.data());
  out_.insert(out_.end(), p, p + s.size());
}

void FrameWriter::bytes(std::span<const std::byte> b) {
  u64(b.size());
  out_.insert(out_.end(), b.begin(), b.end());
}

std::vector<std::byte>& FrameWriter::finish() {
  const auto n = static_cast<std::uint32_t>(out_.size() - 4);
  for (int i = 0; i < 4; ++i)
    out_[static_cast<std::size_t>(i)] = static_cast<std::byte>((n >> (8 * i)) & 0xff);
  return out_;
}

bool FrameReader::take(std::size_t n, const char* field) {
  if (!error_.empty()) return false;
  if (body_.size() - at_ < n) {
    error_ = std::string(to_string(type_)) + ": " + field + " at offset " + std::to_string(at_) +
             " needs " + std::to_string(n) + " bytes, " + std::to_string(body_.size() - at_) +
             " left";
    return false;
  }
  return true;
}

std::uint8_t FrameReader::u8(const char* field) {
  if (!take(1, field)) return 0;
  return static_cast<std::uint8_t>(body_[at_++]);
}

std::uint32_t FrameReader::u32(const char* field) {
  if (!take(4, field)) return 0;
  std::uint32_t v = 0;
  for (int i = 0; i < 4; ++i)
    v |= static_cast<std::uint32_t>(body_[at_ + static_cast<std::size_t>(i)]) << (8 * i);
  at_ += 4;
  return v;
}

std::uint64_t FrameReader::u64(const char* field) {
  if (!take(8, field)) return 0;
  std::uint64_t v = 0;
  for (int i = 0; i < 8; ++i)
    v |= static_cast<std::uint64_t>(body_[at_ + static_cast<std::size_t>(i)]) << (8 * i);
  at_ += 8;
  return v;
}

std::string FrameReader::str(const char* field, std::size_t max) {
  const std::size_t start = at_;
  const auto n = u32(field);
  if (!ok()) return {};
  if (n > max) {
    error_ = std::string(to_string(type_)) + ": " + field + " at offset " + std::to_string(start) +
             " is " + std::to_string(n) + " bytes, more than " + std::to_string(max);
    return {};
  }
  if (!take(n, field)) return {};
  std::string s(reinterpret_cast<const char*>(body_.data() + at_), n);
  at_ += n;
  return s;
}

std::span<const std::byte> FrameReader::bytes(const char* field) {
  const auto n = u64(field);
  if (!ok() || !take(static_cast<std::size_t>(std::min<std::uint64_t>(n, body_.size() + 1)), field))
    return {};
  const auto s = body_.subspan(at_, static_cast<std::size_t>(n));
  at_ += static_cast<std::size_t>(n);
  return s;
}

bool FrameReader::done(std::string& error) {
  if (error_.empty() && at_ != body_.size()) {
    error_ = std::string(to_string(type_)) + ": " + std::to_string(body_.size() - at_) +
             " bytes past its end at offset " + std::to_string(at_);
  }
  if (!error_.empty()) error = error_;
  return error_.empty();
}

std::vector<std::byte> encode(const Hello& h) {
  FrameWriter w(FrameType::hello);
  w.str(kClientMagic);
  w.u32(h.domain_id);
  w.u32(h.node);
  w.u32(static_cast<std::uint32_t>(h.settings.size()));
  for (const auto& [k, v] : h.settings) {
    w.str(k);
    w.str(v);
  }
  return std::move(w.finish());
}

std::vector<std::byte> encode(const Welcome& x) {
  FrameWriter w(FrameType::welcome);
  w.u32(x.relay);
  w.u64(x.max_large_message);
  w.str(x.view_yaml);
  w.bytes(x.state);
  return std::move(w.finish());
}

namespace {
std::vector<std::byte> text_frame(FrameType t, std::string_view text) {
  FrameWriter w(t);
  w.str(text.substr(0, t == FrameType::view ? kMaxViewYaml : kMaxText));
  return std::move(w.finish());
}
}  // namespace

std::vector<std::byte> encode_refused(std::string_view why) {
  return text_frame(FrameType::refused, why);
}
std::vector<std::byte> encode_view(std::string_view yaml) {
  return text_frame(FrameType::view, yaml);
}
std::vector<std::byte> encode_halt(std::string_view why) {
  return text_frame(FrameType::halt, why);
}

std::vector<std::byte> encode(const Lost& l) {
  FrameWriter w(FrameType::lost);
  w.u32(l.node);
  w.u8(l.left ? 1 : 0);
  w.str(std::string_view(l.why).substr(0, kMaxText));
  return std::move(w.finish());
}

std::vector<std::byte> encode(const Acked& a) {
  FrameWriter w(FrameType::acked);
  w.u64(a.writer);
  w.u64(a.count);
  return std::move(w.finish());
}

std::vector<std::byte> encode_want(std::uint64_t topic, group::Want want) {
  FrameWriter w(FrameType::want);
  w.u64(topic);
  w.u8(static_cast<std::uint8_t>(want));
  return std::move(w.finish());
}

std::vector<std::byte> encode_bye() {
  FrameWriter w(FrameType::bye);
  return std::move(w.finish());
}

std::vector<std::byte> encode_publish_head(const group::Channel& channel,
                                           std::size_t message_size) {
  FrameWriter w(FrameType::publish);
  w.u64(channel.topic);
  w.u8(static_cast<std::uint8_t>(channel.ordering));
  w.u64(channel.partition);
  w.u64(message_size);
  auto& out = w.finish();
  // The length counts the message that follows.
  const auto n = static_cast<std::uint32_t>(out.size() - 4 + message_size);
  for (int i = 0; i < 4; ++i)
    out[static_cast<std::size_t>(i)] = static_cast<std::byte>((n >> (8 * i)) & 0xff);
  return std::move(out);
}

void begin_deliver(FrameWriter& w, std::uint32_t count) {
  w.u32(count);
}

void add_delivered(FrameWriter& w, const group::Message& m) {
  w.u32(m.subgroup);
  w.u32(m.sender);
  w.u32(m.sender_rank);
  w.u64(m.index);
  w.u64(static_cast<std::uint64_t>(m.seq));
  w.u32(m.flags);
  w.u64(m.lost_before);
  w.u8(m.listened ? 1 : 0);
  w.bytes(m.payload);
}

std::optional<Hello> decode_hello(std::span<const std::byte> body, std::string& error) {
  FrameReader r(FrameType::hello, body);
  const auto magic = r.str("magic", 64);
  if (r.ok() && magic != kClientMagic) {
    error = "HELLO: magic '" + magic + "' is not '" + std::string(kClientMagic) +
            "' (another protocol, or another version of it)";
    return std::nullopt;
  }
  Hello h;
  h.domain_id = r.u32("domain_id");
  h.node = r.u32("node");
  const auto n = r.u32("settings count");
  if (r.ok() && n > kMaxSettings) {
    error = "HELLO: " + std::to_string(n) + " settings, more than " + std::to_string(kMaxSettings);
    return std::nullopt;
  }
  for (std::uint32_t i = 0; i < n && r.ok(); ++i) {
    auto k = r.str("setting name", kMaxSettingText);
    auto v = r.str("setting value", kMaxSettingText);
    h.settings.emplace_back(std::move(k), std::move(v));
  }
  if (!r.done(error)) return std::nullopt;
  return h;
}

std::optional<Welcome> decode_welcome(std::span<const std::byte> body, std::string& error) {
  FrameReader r(FrameType::welcome, body);
  Welcome w;
  w.relay = r.u32("relay");
  w.max_large_message = r.u64("max_large_message");
  w.view_yaml = r.str("view", kMaxViewYaml);
  const auto state = r.bytes("state");
  if (!r.done(error)) return std::nullopt;
  w.state.assign(state.begin(), state.end());
  return w;
}

std::optional<std::string> decode_text(FrameType t, std::span<const std::byte> body,
                                       std::string& error) {
  FrameReader r(t, body);
  auto s = r.str(t == FrameType::view ? "view" : "reason",
                 t == FrameType::view ? kMaxViewYaml : kMaxText);
  if (!r.done(error)) return std::nullopt;
  return s;
}

std::optional<Lost> decode_lost(std::span<const std::byte> body, std::string& error) {
  FrameReader r(FrameType::lost, body);
  Lost l;
  l.node = r.u32("node");
  const auto left = r.u8("left");
  l.left = left == 1;
  l.why = r.str("reason", kMaxText);
  if (!r.done(error)) return std::nullopt;
  if (left > 1) {
    error = "LOST: left is " + std::to_string(left) + ", not 0 or 1";
    return std::nullopt;
  }
  return l;
}

std::optional<Acked> decode_acked(std::span<const std::byte> body, std::string& error) {
  FrameReader r(FrameType::acked, body);
  Acked a;
  a.writer = r.u64("writer");
  a.count = r.u64("count");
  if (!r.done(error)) return std::nullopt;
  return a;
}

std::optional<std::pair<std::uint64_t, group::Want>> decode_want(std::span<const std::byte> body,
                                                                 std::string& error) {
  FrameReader r(FrameType::want, body);
  const auto topic = r.u64("topic");
  const auto want = r.u8("want");
  if (!r.done(error)) return std::nullopt;
  if (want > static_cast<std::uint8_t>(group::Want::own)) {
    error = "WANT: want is " + std::to_string(want) + ", not 0 (none), 1 (all) or 2 (own)";
    return std::nullopt;
  }
  return std::pair{topic, static_cast<group::Want>(want)};
}

std::optional<Publish> decode_publish(std::span<const std::byte> body, std::string& error) {
  FrameReader r(FrameType::publish, body);
  Publish p;
  p.channel.topic = r.u64("channel.topic");
  const auto ordering = r.u8("channel.ordering");
  p.channel.partition = r.u64("channel.partition");
  p.message = r.bytes("message");
  if (!r.done(error)) return std::nullopt;
  if (ordering > static_cast<std::uint8_t>(group::Ordering::unordered)) {
    error = "PUBLISH: channel.ordering " + std::to_string(ordering) + " is no ordering";
    return std::nullopt;
  }
  p.channel.ordering = static_cast<group::Ordering>(ordering);
  return p;
}

bool decode_deliver(std::span<const std::byte> body, std::vector<group::Message>& out,
                    std::string& error) {
  out.clear();
  FrameReader r(FrameType::deliver, body);
  const auto n = r.u32("count");
  if (r.ok() && n > body.size() / kDeliveredFixed) {
    error = "DELIVER: " + std::to_string(n) + " messages cannot fit " +
            std::to_string(body.size()) + " bytes";
    return false;
  }
  for (std::uint32_t i = 0; i < n && r.ok(); ++i) {
    group::Message m;
    m.subgroup = r.u32("subgroup");
    m.sender = r.u32("sender");
    m.sender_rank = r.u32("sender_rank");
    m.index = r.u64("index");
    m.seq = static_cast<std::int64_t>(r.u64("seq"));
    m.flags = r.u32("flags");
    m.lost_before = r.u64("lost_before");
    const auto listened = r.u8("listened");
    m.listened = listened == 1;
    m.payload = r.bytes("payload");
    if (r.ok() && listened > 1) {
      error = "DELIVER: message " + std::to_string(i) + " listened is " + std::to_string(listened) +
              ", not 0 or 1";
      return false;
    }
    out.push_back(m);
  }
  return r.done(error);
}

}  // namespace spindle::client
