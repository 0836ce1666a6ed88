// DCPS behaviour, single participant: instances of types keyed by a sequence or by a union
// (their key hash is the MD5 of the key's big-endian CDR) are kept apart by key only — the
// writer's and reader's instance handles agree, a second write of an instance is the same
// instance, dispose reaches the right one with its key. Public API only.
#include "api_fixture.hpp"

#include "gaps.hpp"

namespace dcps_api {
namespace {

// A reader and a writer of topic `name` of type T, matched.
template <class T>
struct KeyedPair {
  explicit KeyedPair(Participant& p, const std::string& name)
      : topic(p.dp, name), reader(p.sub, topic, reader_qos()), writer(p.pub, topic, writer_qos()) {
    wait_matched(writer, reader);
  }
  dds::topic::Topic<T> topic;
  dds::sub::DataReader<T> reader;
  dds::pub::DataWriter<T> writer;
};

Gaps::SeqKey seq_key(std::vector<int32_t> ids, const std::string& payload) {
  Gaps::SeqKey s;
  s.ids(std::move(ids));
  s.payload(payload);
  return s;
}

Gaps::UnionKey union_key(int32_t n, int32_t payload) {
  Gaps::UnionKey u;
  u.which().n(n);
  u.payload(payload);
  return u;
}

TEST_CASE("a sequence-keyed topic keeps one instance per sequence value", "[complex_keys]") {
  Participant p;
  KeyedPair<Gaps::SeqKey> k(p, "SeqKeyed");
  const auto h12 = k.writer.register_instance(seq_key({1, 2}, ""));
  REQUIRE_FALSE(h12.is_nil());
  CHECK(k.writer.lookup_instance(seq_key({1, 2}, "other payload")) == h12);
  CHECK(k.writer.lookup_instance(seq_key({1, 2, 0}, "")).is_nil());
  deliver(k.writer, seq_key({1, 2}, "a"), seq_key({1, 2, 0}, "b"), seq_key({1, 2}, "c"),
          seq_key({}, "empty"));

  const auto r12 = k.reader.lookup_instance(seq_key({1, 2}, ""));
  const auto r120 = k.reader.lookup_instance(seq_key({1, 2, 0}, ""));
  const auto rempty = k.reader.lookup_instance(seq_key({}, ""));
  REQUIRE_FALSE(r12.is_nil());
  REQUIRE_FALSE(r120.is_nil());
  REQUIRE_FALSE(rempty.is_nil());
  CHECK(r12 != r120);
  CHECK(r12 != rempty);
  const auto got = k.reader.take();
  REQUIRE(got.length() == 4);
  std::map<std::string, dds::core::InstanceHandle> by_payload;
  for (const auto& s : got)
    by_payload[s.data().payload()] = s.info().instance_handle();
  CHECK(by_payload["a"] == r12);
  CHECK(by_payload["c"] == r12);
  CHECK(by_payload["b"] == r120);
  CHECK(by_payload["empty"] == rempty);

  k.writer.dispose_instance(k.writer.lookup_instance(seq_key({1, 2, 0}, "")));
  flush(k.writer);
  const auto disposed = k.reader.take();
  REQUIRE(disposed.length() == 1);
  CHECK_FALSE(disposed[0].info().valid());
  CHECK(disposed[0].info().instance_handle() == r120);
  CHECK(disposed[0].data().ids() == std::vector<int32_t>{1, 2, 0});
  CHECK(disposed[0].info().state().instance_state() ==
        dds::sub::status::InstanceState::not_alive_disposed());
}

TEST_CASE("a union-keyed topic keeps one instance per discriminator and member value",
          "[complex_keys]") {
  Participant p;
  KeyedPair<Gaps::UnionKey> k(p, "UnionKeyed");
  Gaps::UnionKey text;
  text.which().s("5");
  deliver(k.writer, union_key(5, 1), text, union_key(5, 2), union_key(6, 3));

  const auto r5 = k.reader.lookup_instance(union_key(5, 0));
  const auto rtext = k.reader.lookup_instance(text);
  const auto r6 = k.reader.lookup_instance(union_key(6, 0));
  REQUIRE_FALSE(r5.is_nil());
  REQUIRE_FALSE(rtext.is_nil());
  REQUIRE_FALSE(r6.is_nil());
  CHECK(r5 != rtext);  // the same "5", selected through another member
  CHECK(r5 != r6);
  const auto got = k.reader.take();
  REQUIRE(got.length() == 4);
  for (const auto& s : got) {
    const auto expected = s.data().which()._d() == 2 ? rtext : s.data().which().n() == 5 ? r5 : r6;
    CHECK(s.info().instance_handle() == expected);
  }
  Gaps::UnionKey key;
  CHECK(k.reader.key_value(key, rtext).which().s() == "5");
}

}  // namespace
}  // namespace dcps_api
