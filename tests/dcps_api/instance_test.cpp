// DCPS behaviour, single participant: the instance lifecycle as a reader sees it — dispose,
// unregister, re-register, generation counts, invalid samples, a writer closing with and
// without autodispose — and key handling: lookup_instance, register_instance, key_value,
// a write with another instance's handle. Public API only.
#include "api_fixture.hpp"

namespace dcps_api {
namespace {

using IS = status::InstanceState;

dds::pub::qos::DataWriterQos manual_dispose() {
  auto q = writer_qos();
  q << policy::WriterDataLifecycle::ManuallyDisposeUnregisteredInstances();
  return q;
}

// The last sample of `samples` (the newest of a single instance).
const dds::sub::Sample<FlightState>& newest(const Samples& samples) {
  REQUIRE(samples.length() > 0);
  return samples[samples.length() - 1];
}

TEST_CASE("dispose makes an instance NOT_ALIVE_DISPOSED with an invalid sample carrying the key",
          "[instances]") {
  Participant p;
  auto [reader, writer] = p.matched_pair();
  deliver(writer, flight(4, 1));
  CHECK(reader.read().length() == 1);
  writer.dispose_instance(writer.lookup_instance(flight(4, 0)));
  flush(writer);

  const auto got = reader.read();
  REQUIRE(got.length() == 2);
  CHECK(got[0].info().valid());
  CHECK(got[0].info().state().sample_state() == status::SampleState::read());
  const auto& invalid = got[1];
  CHECK_FALSE(invalid.info().valid());
  CHECK(invalid.data().aircraft_id() == 4);
  CHECK(invalid.info().publication_handle() == got[0].info().publication_handle());
  for (const auto& s : got) {
    CHECK(s.info().state().instance_state() == IS::not_alive_disposed());
    CHECK(s.info().instance_handle() == reader.lookup_instance(flight(4, 0)));
  }
  CHECK(reader.select().state(status::DataState::any_data()).read().length() == 0);
  CHECK(reader.select().state(IS::not_alive_disposed()).read().length() == 2);
}

TEST_CASE("unregistering without autodispose makes an instance NOT_ALIVE_NO_WRITERS",
          "[instances]") {
  Participant p;
  auto [reader, writer] = p.matched_pair(reader_qos(), manual_dispose());
  deliver(writer, flight(5, 1));
  CHECK(reader.read().length() == 1);
  writer.unregister_instance(writer.lookup_instance(flight(5, 0)));
  flush(writer);
  // The data sample was read, so an invalid sample reports the change.
  const auto got = reader.read();
  REQUIRE(got.length() == 2);
  CHECK(got[0].info().valid());
  CHECK_FALSE(got[1].info().valid());
  CHECK(got[1].data().aircraft_id() == 5);
  CHECK(got[1].info().state().instance_state() == IS::not_alive_no_writers());
  // The writer forgot the instance.
  CHECK(writer.lookup_instance(flight(5, 0)).is_nil());
}

TEST_CASE("unregistering with autodispose (the default) disposes the instance", "[instances]") {
  Participant p;
  auto [reader, writer] = p.matched_pair();
  writer.write(flight(5, 1));
  writer.unregister_instance(writer.lookup_instance(flight(5, 0)));
  flush(writer);
  // The unread data sample carries the new state; no invalid sample is needed.
  const auto got = reader.read();
  REQUIRE(got.length() == 1);
  CHECK(got[0].info().valid());
  CHECK(got[0].info().state().instance_state() == IS::not_alive_disposed());
}

TEST_CASE("an instance written again after dispose or no-writers starts a new generation",
          "[instances]") {
  Participant p;
  auto [reader, writer] = p.matched_pair(reader_qos(), manual_dispose());
  deliver(writer, flight(6, 1));
  const auto h = reader.lookup_instance(flight(6, 0));
  {
    const auto s = newest(reader.read());
    CHECK(s.info().generation_count().disposed() == 0);
    CHECK(s.info().generation_count().no_writers() == 0);
  }

  // Disposed, then alive again: disposed generation 1, a new view of the same instance.
  writer.dispose_instance(writer.lookup_instance(flight(6, 0)));
  deliver(writer, flight(6, 2));
  {
    const auto s = newest(reader.select().state(status::DataState::new_data()).read());
    CHECK(s.data().timestamp_ns() == 2);
    CHECK(s.info().instance_handle() == h);
    CHECK(s.info().state().instance_state() == IS::alive());
    CHECK(s.info().state().view_state() == status::ViewState::new_view());
    CHECK(s.info().generation_count().disposed() == 1);
    CHECK(s.info().generation_count().no_writers() == 0);
  }

  // Unregistered (no writers), then registered again by writing: no_writers generation 1.
  writer.unregister_instance(writer.lookup_instance(flight(6, 0)));
  flush(writer);
  CHECK(newest(reader.read()).info().state().instance_state() == IS::not_alive_no_writers());
  deliver(writer, flight(6, 3));
  {
    const auto s = newest(reader.select().state(status::DataState::new_data()).read());
    CHECK(s.data().timestamp_ns() == 3);
    CHECK(s.info().instance_handle() == h);
    CHECK(s.info().state().instance_state() == IS::alive());
    CHECK(s.info().generation_count().disposed() == 1);
    CHECK(s.info().generation_count().no_writers() == 1);
  }
}

TEST_CASE("closing a writer disposes its instances with autodispose, else leaves no writers",
          "[instances]") {
  Participant p;
  auto reader = p.reader();
  auto disposing = p.writer();
  auto leaving = p.writer(manual_dispose());
  wait_matched(disposing, reader, 1, 2);
  wait_matched(leaving, reader, 1, 2);
  disposing.write(flight(1, 1));
  disposing.write(flight(2, 2));
  deliver(leaving, flight(3, 3));
  disposing.close();
  leaving.close();

  auto state_of = [&](std::uint32_t id) {
    const auto got = reader.select().instance(reader.lookup_instance(flight(id, 0))).read();
    return got.length() == 0 ? IS::any() : newest(got).info().state().instance_state();
  };
  REQUIRE(eventually([&] { return reader.matched_publications().empty(); }));
  CHECK(state_of(1) == IS::not_alive_disposed());
  CHECK(state_of(2) == IS::not_alive_disposed());
  CHECK(state_of(3) == IS::not_alive_no_writers());
  const auto matched = reader.subscription_matched_status();
  CHECK(matched.current_count() == 0);
  CHECK(matched.total_count() == 2);
}

TEST_CASE("register_instance and lookup_instance agree; key_value returns the key", "[keys]") {
  Participant p;
  auto [reader, writer] = p.matched_pair();

  CHECK(writer.lookup_instance(flight(42, 0)).is_nil());
  CHECK(reader.lookup_instance(flight(42, 0)).is_nil());
  const auto h = writer.register_instance(flight(42, 0, "KEY"));
  REQUIRE_FALSE(h.is_nil());
  CHECK(writer.lookup_instance(flight(42, 99, "OTHER")) == h);
  CHECK(writer.register_instance(flight(42, 1)) == h);
  FlightState key;
  CHECK(writer.key_value(key, h).aircraft_id() == 42);
  CHECK_THROWS_AS(writer.key_value(key, dds::core::InstanceHandle(123456789)),
                  dds::core::InvalidArgumentError);

  writer.write(flight(42, 7), h);
  flush(writer);
  const auto rh = reader.lookup_instance(flight(42, 0));
  REQUIRE_FALSE(rh.is_nil());
  FlightState rkey;
  CHECK(reader.key_value(rkey, rh).aircraft_id() == 42);
  const auto got = reader.take();
  REQUIRE(got.length() == 1);
  CHECK(got[0].info().instance_handle() == rh);
  CHECK(reader.lookup_instance(flight(43, 0)).is_nil());
  CHECK_THROWS_AS(reader.key_value(rkey, dds::core::InstanceHandle(123456789)),
                  dds::core::InvalidArgumentError);
}

TEST_CASE("writing with another instance's handle is refused and delivers nothing", "[keys]") {
  Participant p;
  auto [reader, writer] = p.matched_pair();
  const auto h1 = writer.register_instance(flight(1, 0));
  CHECK_THROWS_AS(writer.write(flight(2, 1), h1), dds::core::PreconditionNotMetError);
  CHECK(writer.lookup_instance(flight(2, 0)).is_nil());
  CHECK_THROWS_AS(writer.dispose_instance(dds::core::InstanceHandle(777777)),
                  dds::core::PreconditionNotMetError);
  CHECK_THROWS_AS(writer.unregister_instance(dds::core::InstanceHandle(777777)),
                  dds::core::PreconditionNotMetError);
  writer.write(flight(1, 2), h1);
  flush(writer);
  CHECK(seqs(reader.take()) == std::vector<std::uint64_t>{2});
}

}  // namespace
}  // namespace dcps_api
