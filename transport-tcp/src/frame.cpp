// TCP frame encoding and the validating decoder (format: frame.hpp, docs/transport-tcp.md).
#include "frame.hpp"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <stdexcept>

#include "transport/aligned_buffer.hpp"

namespace spindle::transport::tcp_frames {

namespace {

std::uint32_t fnv1a(const std::byte* p, std::size_t n) noexcept {
  std::uint32_t h = 2166136261u;
  for (std::size_t i = 0; i < n; ++i) {
    h ^= static_cast<std::uint32_t>(p[i]);
    h *= 16777619u;
  }
  return h;
}

std::string type_name(FrameType t) {
  switch (t) {
    case FrameType::hello:
      return "HELLO";
    case FrameType::write:
      return "WRITE";
    case FrameType::block:
      return "BLOCK";
    case FrameType::heartbeat:
      return "HEARTBEAT";
    case FrameType::goodbye:
      return "GOODBYE";
  }
  return "?";
}

}  // namespace

void encode_header(std::vector<std::byte>& out, const FrameHeader& h) {
  std::byte b[kHeaderSize] = {};
  b[0] = static_cast<std::byte>(h.type);
  put<std::uint32_t>(b + 4, h.arg);
  put<std::uint64_t>(b + 8, h.offset);
  put<std::uint32_t>(b + 16, h.length);
  put<std::uint32_t>(b + 20, fnv1a(b, 20));
  out.insert(out.end(), b, b + kHeaderSize);
}

std::string check_settings(std::span<const AgreedSetting> settings) {
  std::size_t bytes = 0;
  for (std::size_t i = 0; i < settings.size(); ++i) {
    const auto& st = settings[i];
    if (st.name.empty() || st.name.size() > 255 || st.value.size() > 255)
      return "setting '" + st.name + "': name must be 1..255 bytes and value at most 255";
    for (std::size_t j = 0; j < i; ++j)
      if (settings[j].name == st.name) return "setting '" + st.name + "' appears twice";
    bytes += 2 + st.name.size() + st.value.size();
  }
  if (bytes > kMaxHelloSettingsBytes)
    return "settings take " + std::to_string(bytes) + " bytes, more than " +
           std::to_string(kMaxHelloSettingsBytes);
  return "";
}

void encode_hello(std::vector<std::byte>& out, const Hello& hello) {
  if (auto why = check_settings(hello.settings); !why.empty())
    throw std::invalid_argument("tcp HELLO: " + why);
  std::size_t settings_bytes = 0;
  for (const auto& st : hello.settings)
    settings_bytes += 2 + st.name.size() + st.value.size();
  const auto count = static_cast<std::uint32_t>(hello.regions.size());
  encode_header(out, FrameHeader{FrameType::hello, hello.node, hello.epoch,
                                 static_cast<std::uint32_t>(kHelloFixed + kHelloEntry * count +
                                                            settings_bytes)});
  std::byte fixed[kHelloFixed] = {};
  std::memcpy(fixed, kMagic, 8);
  put<std::uint32_t>(fixed + 8, kVersion);
  put<std::uint32_t>(fixed + 12, count);
  put<std::uint32_t>(fixed + 16, hello.domain);
  put<std::uint32_t>(fixed + 20, static_cast<std::uint32_t>(settings_bytes));
  put<std::uint64_t>(fixed + 24, hello.nonce);
  out.insert(out.end(), fixed, fixed + kHelloFixed);
  for (const auto& r : hello.regions) {
    std::byte e[kHelloEntry] = {};
    put<std::uint32_t>(e, r.id);
    put<std::uint64_t>(e + 8, r.size);
    out.insert(out.end(), e, e + kHelloEntry);
  }
  for (const auto& st : hello.settings) {
    out.push_back(static_cast<std::byte>(st.name.size()));
    out.push_back(static_cast<std::byte>(st.value.size()));
    for (char ch : st.name)
      out.push_back(static_cast<std::byte>(ch));
    for (char ch : st.value)
      out.push_back(static_cast<std::byte>(ch));
  }
}

void encode_hello(std::vector<std::byte>& out, NodeId node, std::uint64_t epoch,
                  std::span<const RegionDescriptor> regions) {
  Hello h;
  h.node = node;
  h.epoch = epoch;
  h.regions.assign(regions.begin(), regions.end());
  encode_hello(out, h);
}

namespace {

bool printable(const std::byte* p, std::size_t n) {
  return std::all_of(p, p + n, [](std::byte b) {
    const auto c = static_cast<std::uint8_t>(b);
    return c >= 0x20 && c < 0x7f;
  });
}

// Parses the settings list of a HELLO; an empty string if it is well formed.
std::string parse_settings(const std::byte* p, std::size_t n, std::vector<AgreedSetting>& out) {
  std::size_t at = 0;
  while (at < n) {
    if (n - at < 2) return "HELLO setting entry cut short at byte " + std::to_string(at);
    const std::size_t name_len = static_cast<std::uint8_t>(p[at]);
    const std::size_t value_len = static_cast<std::uint8_t>(p[at + 1]);
    at += 2;
    if (name_len == 0) return "HELLO setting with an empty name";
    if (n - at < name_len + value_len)
      return "HELLO setting entry runs past the settings' " + std::to_string(n) + " bytes";
    if (!printable(p + at, name_len + value_len))
      return "HELLO setting with a non-printable name or value";
    AgreedSetting st;
    st.name.assign(reinterpret_cast<const char*>(p + at), name_len);
    st.value.assign(reinterpret_cast<const char*>(p + at + name_len), value_len);
    at += name_len + value_len;
    for (const auto& seen : out)
      if (seen.name == st.name) return "HELLO setting '" + st.name + "' appears twice";
    out.push_back(std::move(st));
  }
  return "";
}

}  // namespace

DecodeResult FrameDecoder::fail(std::size_t consumed, SuspicionReason reason, std::string detail) {
  stage_ = Stage::failed;
  return DecodeResult{consumed, DecodeState::error, reason, std::move(detail)};
}

// Validates the header in header_ and sets up the payload stage. Returns false on error
// (r filled in) or when a block must wait (r.state = paused).
bool FrameDecoder::start_frame(DecodeResult& r, std::size_t consumed, FrameSink& sink) {
  const std::uint8_t type = static_cast<std::uint8_t>(header_[0]);
  const std::uint8_t flags = static_cast<std::uint8_t>(header_[1]);
  const auto reserved = get<std::uint16_t>(header_ + 2);
  h_.arg = get<std::uint32_t>(header_ + 4);
  h_.offset = get<std::uint64_t>(header_ + 8);
  h_.length = get<std::uint32_t>(header_ + 16);
  const auto check = get<std::uint32_t>(header_ + 20);
  if (check != fnv1a(header_, 20)) {
    r = fail(consumed, SuspicionReason::malformed_frame, "header check word mismatch");
    return false;
  }
  if (type < 1 || type > 5) {
    r = fail(consumed, SuspicionReason::malformed_frame,
             "unknown frame type " + std::to_string(type));
    return false;
  }
  h_.type = static_cast<FrameType>(type);
  if (flags != 0 || reserved != 0) {
    r = fail(consumed, SuspicionReason::malformed_frame,
             type_name(h_.type) + ": nonzero flags/reserved field");
    return false;
  }
  if (!hello_seen_ && h_.type != FrameType::hello) {
    r = fail(consumed, SuspicionReason::malformed_frame, type_name(h_.type) + " before HELLO");
    return false;
  }
  remaining_ = h_.length;
  switch (h_.type) {
    case FrameType::hello: {
      if (hello_seen_) {
        r = fail(consumed, SuspicionReason::malformed_frame, "second HELLO");
        return false;
      }
      // Only the magic and the version are needed to tell another version apart; the rest
      // of the layout is checked once the version is known.
      const std::uint64_t max =
          kHelloFixed + std::uint64_t{kHelloEntry} * kMaxHelloRegions + kMaxHelloSettingsBytes;
      if (h_.length < 12 || h_.length > max) {
        r = fail(
            consumed, SuspicionReason::malformed_frame,
            "HELLO length " + std::to_string(h_.length) + " outside 12.." + std::to_string(max));
        return false;
      }
      // No reservation: a stranger's header alone must not make us allocate its length.
      hello_.clear();
      stage_ = Stage::hello;
      return true;
    }
    case FrameType::write: {
      auto region = sink.region(h_.arg);
      if (region.empty()) {
        r = fail(consumed, SuspicionReason::unknown_region,
                 "WRITE to unknown region " + std::to_string(h_.arg));
        return false;
      }
      if (!in_bounds(h_.offset, h_.length, region.size())) {
        r = fail(consumed, SuspicionReason::out_of_bounds,
                 "WRITE region " + std::to_string(h_.arg) + " offset " + std::to_string(h_.offset) +
                     " length " + std::to_string(h_.length) + " outside its " +
                     std::to_string(region.size()) + " bytes");
        return false;
      }
      if (auto why = sink.refuse_write(h_.arg, h_.offset, h_.length); !why.empty()) {
        r = fail(consumed, SuspicionReason::foreign_write, std::move(why));
        return false;
      }
      dest_ = region.data() + h_.offset;
      // Everything applied before this frame happens-before anything a reader sees of it.
      std::atomic_thread_fence(std::memory_order_release);
      stage_ = Stage::write;
      return true;
    }
    case FrameType::block: {
      if (h_.length > max_block_) {
        r = fail(consumed, SuspicionReason::out_of_bounds,
                 "BLOCK length " + std::to_string(h_.length) + " over the limit " +
                     std::to_string(max_block_));
        return false;
      }
      auto target = sink.on_block_begin(h_.length, h_.arg);
      if (target.overflow) {
        r = fail(consumed, SuspicionReason::block_overflow,
                 "BLOCK of " + std::to_string(h_.length) + " bytes > posted receive of " +
                     std::to_string(target.capacity));
        return false;
      }
      if (!target.ready) {
        block_pending_ = true;
        r.consumed = consumed;
        r.state = DecodeState::paused;
        return false;
      }
      block_pending_ = false;
      dest_ = target.dest.data();
      std::atomic_thread_fence(std::memory_order_release);
      stage_ = Stage::block;
      return true;
    }
    case FrameType::heartbeat:
    case FrameType::goodbye:
      if (h_.length != 0 || h_.offset != 0 || h_.arg != 0) {
        r = fail(consumed, SuspicionReason::malformed_frame,
                 type_name(h_.type) + " with nonzero arg/offset/length");
        return false;
      }
      if (h_.type == FrameType::goodbye) sink.on_goodbye();
      stage_ = Stage::header;
      return true;
  }
  return true;
}

DecodeResult FrameDecoder::feed(std::span<const std::byte> in, FrameSink& sink) {
  DecodeResult r;
  std::size_t pos = 0;
  if (stage_ == Stage::failed) return fail(0, SuspicionReason::malformed_frame, "decoder failed");
  // A block that waited for a receive: ask again before reading on.
  if (block_pending_ && !start_frame(r, 0, sink)) return r;
  while (true) {
    if (stage_ == Stage::header) {
      if (pos == in.size()) break;
      const std::size_t take = std::min(kHeaderSize - have_, in.size() - pos);
      std::memcpy(header_ + have_, in.data() + pos, take);
      have_ += take;
      pos += take;
      if (have_ < kHeaderSize) break;
      have_ = 0;
      if (!start_frame(r, pos, sink)) return r;
      continue;
    }
    // Payload stages; zero-length payloads finish without input.
    const std::size_t take =
        static_cast<std::size_t>(std::min<std::uint64_t>(remaining_, in.size() - pos));
    if (take > 0) {
      if (stage_ == Stage::hello) {
        hello_.insert(hello_.end(), in.data() + pos, in.data() + pos + take);
      } else if (stage_ == Stage::write && h_.length <= kWholeWrite &&
                 (staged_ || take < remaining_)) {
        std::memcpy(small_ + (h_.length - remaining_), in.data() + pos, take);
        staged_ = true;
      } else {
        std::memcpy(dest_, in.data() + pos, take);
        dest_ += take;
      }
      pos += take;
      remaining_ -= take;
    }
    if (remaining_ > 0) break;
    if (staged_) {
      std::memcpy(dest_, small_, h_.length);  // one copy: each aligned word lands whole
      staged_ = false;
    }
    if (stage_ == Stage::hello) {
      if (std::memcmp(hello_.data(), kMagic, 8) != 0) {
        return fail(pos, SuspicionReason::malformed_frame, "HELLO magic is not SPNDLTCP");
      }
      const auto version = get<std::uint32_t>(hello_.data() + 8);
      if (version != kVersion) {
        return fail(pos, SuspicionReason::malformed_frame,
                    "HELLO version " + std::to_string(version) + " (we speak " +
                        std::to_string(kVersion) + ")");
      }
      if (h_.length < kHelloFixed) {
        return fail(pos, SuspicionReason::malformed_frame,
                    "HELLO length " + std::to_string(h_.length) + " shorter than its " +
                        std::to_string(kHelloFixed) + " fixed bytes");
      }
      const auto count = get<std::uint32_t>(hello_.data() + 12);
      const auto settings_bytes = get<std::uint32_t>(hello_.data() + 20);
      if (count > kMaxHelloRegions || settings_bytes > kMaxHelloSettingsBytes ||
          kHelloFixed + std::uint64_t{kHelloEntry} * count + settings_bytes != h_.length) {
        return fail(pos, SuspicionReason::malformed_frame,
                    "HELLO length " + std::to_string(h_.length) + " is not " +
                        std::to_string(kHelloFixed) + " + 16 * " + std::to_string(count) +
                        " regions + " + std::to_string(settings_bytes) + " settings bytes");
      }
      Hello hello;
      hello.node = h_.arg;
      hello.epoch = h_.offset;
      hello.domain = get<std::uint32_t>(hello_.data() + 16);
      hello.nonce = get<std::uint64_t>(hello_.data() + 24);
      hello.regions.resize(count);
      for (std::uint32_t i = 0; i < count; ++i) {
        const std::byte* e = hello_.data() + kHelloFixed + kHelloEntry * i;
        hello.regions[i].id = get<std::uint32_t>(e);
        hello.regions[i].size = get<std::uint64_t>(e + 8);
      }
      const std::byte* sb = hello_.data() + kHelloFixed + kHelloEntry * count;
      if (auto why = parse_settings(sb, settings_bytes, hello.settings); !why.empty()) {
        return fail(pos, SuspicionReason::malformed_frame, why);
      }
      hello_seen_ = true;
      hello_.clear();
      hello_.shrink_to_fit();
      sink.on_hello(hello);
    } else if (stage_ == Stage::block) {
      sink.on_block_end();
    }
    stage_ = Stage::header;
  }
  r.consumed = pos;
  return r;
}

}  // namespace spindle::transport::tcp_frames
