// libFuzzer target for the client link's frames (client/relay_wire.hpp). The first byte picks
// the frame type, the rest is its body: any bytes give the frame or a reason, never a crash, a
// hang or an exception; what decodes lies inside the body, and a frame that decodes encodes
// back to the same body (the format is canonical).
//
// Threading: single-threaded (libFuzzer's).
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <vector>

#include "client/relay_wire.hpp"

namespace sc = spindle::client;

namespace {

void same(const std::vector<std::byte>& frame, std::span<const std::byte> body) {
  if (frame.size() != sc::kFrameHead + body.size() ||
      (!body.empty() && std::memcmp(frame.data() + sc::kFrameHead, body.data(), body.size()) != 0))
    __builtin_trap();
}

void inside(std::span<const std::byte> part, std::span<const std::byte> body) {
  if (!part.empty() &&
      (part.data() < body.data() || part.data() + part.size() > body.data() + body.size()))
    __builtin_trap();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const auto type = static_cast<sc::FrameType>(data[0]);
  const std::span<const std::byte> body(reinterpret_cast<const std::byte*>(data) + 1, size - 1);
  std::string error;
  bool ok = false;
  switch (type) {
    case sc::FrameType::hello:
      if (const auto h = sc::decode_hello(body, error)) {
        same(sc::encode(*h), body);
        ok = true;
      }
      break;
    case sc::FrameType::welcome:
      if (const auto w = sc::decode_welcome(body, error)) {
        same(sc::encode(*w), body);
        ok = true;
      }
      break;
    case sc::FrameType::refused:
    case sc::FrameType::view:
    case sc::FrameType::halt:
      if (const auto t = sc::decode_text(type, body, error)) {
        same(type == sc::FrameType::view   ? sc::encode_view(*t)
             : type == sc::FrameType::halt ? sc::encode_halt(*t)
                                           : sc::encode_refused(*t),
             body);
        ok = true;
      }
      break;
    case sc::FrameType::lost:
      if (const auto l = sc::decode_lost(body, error)) {
        same(sc::encode(*l), body);
        ok = true;
      }
      break;
    case sc::FrameType::acked:
      if (const auto a = sc::decode_acked(body, error)) {
        same(sc::encode(*a), body);
        ok = true;
      }
      break;
    case sc::FrameType::want:
      if (const auto w = sc::decode_want(body, error)) {
        same(sc::encode_want(w->first, w->second), body);
        ok = true;
      }
      break;
    case sc::FrameType::publish:
      if (const auto p = sc::decode_publish(body, error)) {
        inside(p->message, body);
        auto again = sc::encode_publish_head(p->channel, p->message.size());
        again.insert(again.end(), p->message.begin(), p->message.end());
        same(again, body);
        ok = true;
      }
      break;
    case sc::FrameType::deliver: {
      std::vector<spindle::group::Message> out;
      ok = sc::decode_deliver(body, out, error);
      if (!ok) break;
      sc::FrameWriter w(sc::FrameType::deliver);
      sc::begin_deliver(w, static_cast<std::uint32_t>(out.size()));
      for (const auto& m : out) {
        inside(m.payload, body);
        sc::add_delivered(w, m);
      }
      same(w.finish(), body);
      break;
    }
    default:
      return 0;
  }
  if (!ok && error.empty()) __builtin_trap();  // refused, so it says why
  return 0;
}
