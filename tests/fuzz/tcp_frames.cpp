// libFuzzer target: arbitrary bytes, fed in arbitrary chunks, into the TCP frame decoder.
// Regions are exact-size heap buffers, so ASan flags any write outside them; region 2 is
// restricted (rows belong to their owners): the peer may write [1024, 2048) of it only,
// and a byte written elsewhere in it traps. Input layout:
//   byte 0      bit 0: prepend a valid HELLO (reach WRITE/BLOCK paths quickly)
//               bits 1-3: posted receive capacity class; bits 4-7: chunk size seed
//   bytes 1..   the stream
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "frame.hpp"

namespace tf = spindle::transport::tcp_frames;
namespace st = spindle::transport;

namespace {

struct Sink final : tf::FrameSink {
  std::vector<std::unique_ptr<std::byte[]>> mem;
  std::vector<std::size_t> sizes;
  std::uint32_t receive_capacity = 0;
  int receives_left = 4;
  std::unique_ptr<std::byte[]> rx;

  Sink() {
    for (std::size_t s : {std::size_t{1}, std::size_t{64}, std::size_t{4096}}) {
      mem.push_back(std::make_unique<std::byte[]>(s));
      sizes.push_back(s);
    }
  }
  std::span<std::byte> region(st::RegionId id) override {
    if (id >= mem.size()) return {};
    return {mem[id].get(), sizes[id]};
  }
  static constexpr std::uint64_t kRowBegin = 1024, kRowEnd = 2048;
  std::string refuse_write(st::RegionId id, std::uint64_t offset, std::uint32_t length) override {
    if (id != 2 || (offset >= kRowBegin && offset <= kRowEnd && length <= kRowEnd - offset))
      return {};
    return "outside the row";
  }
  void on_hello(const tf::Hello&) override {}
  BlockTarget on_block_begin(std::uint32_t length, std::uint32_t) override {
    if (receives_left == 0) return BlockTarget{};  // pause: no receive posted
    if (length > receive_capacity) return BlockTarget{false, true, {}, receive_capacity};
    --receives_left;
    rx = std::make_unique<std::byte[]>(length == 0 ? 1 : length);
    return BlockTarget{true, false, {rx.get(), length}, receive_capacity};
  }
  void on_block_end() override {}
  void on_goodbye() override {}
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::uint8_t control = data[0];
  std::vector<std::byte> stream;
  if (control & 1) tf::encode_hello(stream, 2, 1, {});
  const auto* body = reinterpret_cast<const std::byte*>(data + 1);
  stream.insert(stream.end(), body, body + (size - 1));

  Sink sink;
  sink.receive_capacity = std::uint32_t{1} << (((control >> 1) & 7) * 2);
  tf::FrameDecoder decoder(1u << 16);
  std::size_t pos = 0;
  std::size_t chunk = 1 + (control >> 4) * 7;
  int pauses = 0;
  while (pos < stream.size()) {
    const std::size_t n = std::min(chunk, stream.size() - pos);
    auto r = decoder.feed(std::span<const std::byte>(stream.data() + pos, n), sink);
    if (r.consumed > n) __builtin_trap();
    pos += r.consumed;
    if (r.state == tf::DecodeState::error) break;
    if (r.state == tf::DecodeState::paused) {
      if (++pauses > 8) break;
      sink.receives_left = 2;  // the application posts more receives
    }
    chunk = chunk * 3 % 61 + 1;
  }
  (void)decoder.mid_frame();
  for (std::size_t i = 0; i < sink.sizes[2]; ++i) {
    if ((i < Sink::kRowBegin || i >= Sink::kRowEnd) && sink.mem[2][i] != std::byte{0})
      __builtin_trap();  // a refused write was applied
  }
  return 0;
}
