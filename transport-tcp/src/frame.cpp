// TCP frame encoding and the validating decoder (format: frame.hpp, docs/transport-tcp.md).
#include "frame.hpp"

#include <algorithm>
#include <atomic>
#include <cstring>

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

template <class T>
void put(std::byte* p, T v) noexcept {
  for (std::size_t i = 0; i < sizeof(T); ++i) {
    p[i] = static_cast<std::byte>((v >> (8 * i)) & 0xff);
  }
}

template <class T>
T get(const std::byte* p) noexcept {
  T v = 0;
  for (std::size_t i = 0; i < sizeof(T); ++i) {
    v = static_cast<T>(v | (static_cast<T>(static_cast<std::uint8_t>(p[i])) << (8 * i)));
  }
  return v;
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

void encode_hello(std::vector<std::byte>& out, NodeId node, std::uint64_t epoch,
                  std::span<const RegionDescriptor> regions) {
  const auto count = static_cast<std::uint32_t>(regions.size());
  encode_header(out, FrameHeader{FrameType::hello, node, epoch,
                                 static_cast<std::uint32_t>(kHelloFixed + kHelloEntry * count)});
  std::byte fixed[kHelloFixed] = {};
  std::memcpy(fixed, kMagic, 8);
  put<std::uint32_t>(fixed + 8, kVersion);
  put<std::uint32_t>(fixed + 12, count);
  out.insert(out.end(), fixed, fixed + kHelloFixed);
  for (const auto& r : regions) {
    std::byte e[kHelloEntry] = {};
    put<std::uint32_t>(e, r.id);
    put<std::uint64_t>(e + 8, r.size);
    out.insert(out.end(), e, e + kHelloEntry);
  }
}

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
      const std::uint64_t max = kHelloFixed + std::uint64_t{kHelloEntry} * kMaxHelloRegions;
      if (h_.length < kHelloFixed || h_.length > max || (h_.length - kHelloFixed) % kHelloEntry) {
        r = fail(consumed, SuspicionReason::malformed_frame,
                 "HELLO length " + std::to_string(h_.length) + " is not 16 + 16 * count");
        return false;
      }
      hello_.clear();
      hello_.reserve(h_.length);
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
      const auto count = get<std::uint32_t>(hello_.data() + 12);
      if (version != kVersion) {
        return fail(pos, SuspicionReason::malformed_frame,
                    "HELLO version " + std::to_string(version) + " (we speak 1)");
      }
      if (kHelloFixed + std::uint64_t{kHelloEntry} * count != h_.length) {
        return fail(pos, SuspicionReason::malformed_frame,
                    "HELLO region count disagrees with length");
      }
      std::vector<RegionDescriptor> regions(count);
      for (std::uint32_t i = 0; i < count; ++i) {
        const std::byte* e = hello_.data() + kHelloFixed + kHelloEntry * i;
        regions[i].id = get<std::uint32_t>(e);
        regions[i].size = get<std::uint64_t>(e + 8);
      }
      hello_seen_ = true;
      sink.on_hello(h_.arg, h_.offset, regions);
    } else if (stage_ == Stage::block) {
      sink.on_block_end();
    }
    stage_ = Stage::header;
  }
  r.consumed = pos;
  return r;
}

}  // namespace spindle::transport::tcp_frames
