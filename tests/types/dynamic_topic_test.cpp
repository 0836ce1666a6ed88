// A topic of a type known only at run time, through the standard API: a dynamic writer and a
// generated reader of the same IDL share the topic both ways, with keys, dispose and
// unregister; encoding errors surface as the DCPS exceptions.
#include <catch2/catch.hpp>
#include <dds/dds.hpp>
#include <spindle/types/dynamic_topic.hpp>
#include <spindle/types/from_idl.hpp>
#include <spindle/types/type_object.hpp>

#include "ShapeType.hpp"
#include "avionics.hpp"

#include <chrono>
#include <cstring>
#include <thread>

using namespace spindle::types;
using namespace std::chrono_literals;

namespace {

template <class Pred>
bool eventually(Pred&& pred) {
  const auto until = std::chrono::steady_clock::now() + 5s;
  while (!pred()) {
    if (std::chrono::steady_clock::now() > until) return false;
    std::this_thread::sleep_for(2ms);
  }
  return true;
}

dds::pub::qos::DataWriterQos reliable_writer() {
  dds::pub::qos::DataWriterQos q;
  q << dds::core::policy::Reliability::Reliable(dds::core::Duration::from_secs(5));
  return q;
}
dds::sub::qos::DataReaderQos reliable_reader() {
  dds::sub::qos::DataReaderQos q;
  q << dds::core::policy::Reliability::Reliable() << dds::core::policy::History::KeepAll();
  return q;
}

}  // namespace

TEST_CASE("A dynamic writer and a generated reader share a topic both ways",
          "[types][dynamic_topic]") {
  TypeLibrary lib;
  load_idl_file(lib, std::string(SPINDLE_SOURCE_DIR) + "/idl/ShapeType.idl");
  const Type& shape = *lib.find("ShapeType");

  // A dynamic participant and a generated one, as a tool and an application would be.
  dds::domain::DomainParticipant dyn(0);
  dds::domain::DomainParticipant gen(0);
  auto dyn_topic = create_topic(dyn, "Square", shape);
  dds::topic::Topic<ShapeType> gen_topic(gen, "Square");
  CHECK(dyn_topic.type_name() == gen_topic.type_name());
  CHECK(create_topic(dyn, "Square", shape) == dyn_topic);  // one type, one topic
  // One participant cannot hold the name both ways.
  CHECK_THROWS_AS(dds::topic::Topic<ShapeType>(dyn, "Square"), dds::core::PreconditionNotMetError);

  dds::pub::DataWriter<DynamicSample> dyn_writer(dds::pub::Publisher(dyn), dyn_topic,
                                                 reliable_writer());
  dds::sub::DataReader<ShapeType> gen_reader(dds::sub::Subscriber(gen), gen_topic,
                                             reliable_reader());
  dds::pub::DataWriter<ShapeType> gen_writer(dds::pub::Publisher(gen), gen_topic,
                                             reliable_writer());
  dds::sub::DataReader<DynamicSample> dyn_reader(dds::sub::Subscriber(dyn), dyn_topic,
                                                 reliable_reader());

  REQUIRE(eventually([&] {
    return dyn_writer.publication_matched_status().current_count() == 2 &&
           gen_writer.publication_matched_status().current_count() == 2;
  }));

  // Dynamic to generated, then dispose of that instance.
  dyn_writer.write(
      DynamicSample{&shape, {{"color", "BLUE"}, {"x", 1}, {"y", 2}, {"shapesize", 30}}});
  std::vector<ShapeType> got;
  REQUIRE(eventually([&] {
    for (const auto& s : gen_reader.take())
      if (s.info().valid()) got.push_back(s.data());
    return !got.empty();
  }));
  CHECK(got.front() == ShapeType("BLUE", 1, 2, 30));
  dyn_writer.dispose_instance(
      dyn_writer.register_instance(DynamicSample{&shape, {{"color", "BLUE"}}}));
  bool disposed = false;
  REQUIRE(eventually([&] {
    for (const auto& s : gen_reader.take())
      disposed = disposed || s.info().state().instance_state() ==
                                 dds::sub::status::InstanceState::not_alive_disposed();
    return disposed;
  }));

  // Generated to dynamic: the dynamic reader sees the writer's sample as JSON, and the
  // dynamic writer's own samples too (both writers are matched).
  gen_writer.write(ShapeType("RED", 5, 6, 7));
  bool seen = false;
  REQUIRE(eventually([&] {
    for (const auto& s : dyn_reader.take()) {
      if (!s.info().valid()) continue;
      CHECK(s.data().type == &shape);
      if (s.data().value["color"] == "RED") {
        CHECK(s.data().value.dump() == R"({"color":"RED","x":5,"y":6,"shapesize":7})");
        // The bytes as received come with it.
        REQUIRE(s.data().encoded);
        CHECK(*s.data().encoded == encode(shape, s.data().value));
        seen = true;
      }
    }
    return seen;
  }));

  // Bytes passed on as they are (a relay): the writer sends `encoded`, not `value` encoded
  // again — the value here holds only the key, and the generated reader gets the bytes' sample.
  DynamicSample relayed{&shape, {{"color", "GREEN"}}};
  relayed.encoded = std::make_shared<const std::vector<std::byte>>(
      encode(shape, {{"color", "GREEN"}, {"x", 9}, {"y", 8}, {"shapesize", 7}}));
  dyn_writer.write(relayed);
  got.clear();
  REQUIRE(eventually([&] {
    for (const auto& s : gen_reader.take())
      if (s.info().valid() && s.data().color() == "GREEN") got.push_back(s.data());
    return !got.empty();
  }));
  CHECK(got.front() == ShapeType("GREEN", 9, 8, 7));
  // Bytes of another encoding than the writer's are not used: the value is encoded.
  DynamicSample other{&shape, {{"color", "GREY"}, {"x", 1}, {"y", 1}, {"shapesize", 1}}};
  other.encoded = std::make_shared<const std::vector<std::byte>>(
      encode(shape, {{"color", "GREY"}, {"x", 2}, {"y", 2}, {"shapesize", 2}},
             spindle::cdr::Encoding::Xcdr2));
  dyn_writer.write(other);
  got.clear();
  REQUIRE(eventually([&] {
    for (const auto& s : gen_reader.take())
      if (s.info().valid() && s.data().color() == "GREY") got.push_back(s.data());
    return !got.empty();
  }));
  CHECK(got.front() == ShapeType("GREY", 1, 1, 1));
}

TEST_CASE("A dynamic sample that does not fit its type is refused by write()",
          "[types][dynamic_topic][errors]") {
  TypeLibrary lib;
  load_idl_text(lib, "struct Bounded { @key long id; string<4> name; };", "bounded.idl");
  const Type& bounded = *lib.find("Bounded");
  dds::domain::DomainParticipant dp(0);
  dds::pub::Publisher pub(dp);
  auto topic = create_topic(dp, "Bounded", bounded);
  dds::pub::DataWriter<DynamicSample> writer(pub, topic);
  CHECK_THROWS_WITH(
      writer.write(DynamicSample{&bounded, {{"id", 1}, {"name", "toolong"}}}),
      Catch::Matchers::Contains("Bounded.name: string of 7 elements over its bound of 4"));
  CHECK_THROWS_WITH(writer.write(DynamicSample{&bounded, {{"id", "one"}}}),
                    Catch::Matchers::Contains("Bounded.id: expected an integer"));
  CHECK_NOTHROW(writer.write(DynamicSample{&bounded, {{"id", 1}, {"name", "ok"}}}));

  TypeLibrary other;
  load_idl_text(other, "enum E { A, B };", "enum.idl");
  CHECK_THROWS_AS(create_topic(dp, "E", *other.find("E")), std::invalid_argument);
}

TEST_CASE("A topic's type is found in the running domain and its samples read without its code",
          "[types][dynamic_topic][discovery]") {
  // idlc generated the type information the runtime announces: the same bytes as the type
  // loaded from the IDL at run time gives.
  TypeLibrary idl;
  load_idl_file(idl, std::string(SPINDLE_SOURCE_DIR) + "/idl/ShapeType.idl");
  const auto info = make_type_info(*idl.find("ShapeType"));
  const auto& generated = spindle::topic_traits<ShapeType>::type_information;
  CHECK(std::vector<std::byte>(reinterpret_cast<const std::byte*>(generated.data()),
                               reinterpret_cast<const std::byte*>(generated.data()) +
                                   generated.size()) == info.information);

  dds::domain::DomainParticipant app(0);
  dds::topic::Topic<ShapeType> topic(app, "Circle");
  dds::pub::DataWriter<ShapeType> writer(dds::pub::Publisher(app), topic, reliable_writer());

  // A tool that knows nothing of ShapeType.
  dds::domain::DomainParticipant tool(0);
  TypeLibrary found;
  const Type* type = nullptr;
  REQUIRE(eventually([&] { return (type = discovered_type(tool, "Circle", found)) != nullptr; }));
  CHECK(type->name == "ShapeType");
  REQUIRE(type->members.size() == 4);
  CHECK(type->members[0].key);
  CHECK(discovered_type(tool, "NoSuchTopic", found) == nullptr);

  dds::sub::DataReader<DynamicSample> reader(
      dds::sub::Subscriber(tool), create_topic(tool, "Circle", *type), reliable_reader());
  REQUIRE(eventually([&] { return writer.publication_matched_status().current_count() == 1; }));
  writer.write(ShapeType("GREEN", 3, 4, 5));
  std::string seen;
  REQUIRE(eventually([&] {
    for (const auto& s : reader.take())
      if (s.info().valid()) seen = s.data().value.dump();
    return !seen.empty();
  }));
  CHECK(seen == R"({"color":"GREEN","x":3,"y":4,"shapesize":5})");
}

TEST_CASE("A type larger than a slot reaches members already in the domain, in pieces",
          "[types][dynamic_topic][discovery]") {
  dds::domain::DomainParticipant tool(0);
  dds::domain::DomainParticipant app(0);
  // Created once both are members: its type goes by announce_type pieces, not in the state a
  // joiner receives (the case above).
  dds::topic::Topic<Avionics::Navigation> topic(app, "Navigation");
  REQUIRE(spindle::topic_traits<Avionics::Navigation>::type_mapping.size() > 1024);
  TypeLibrary found;
  const Type* type = nullptr;
  REQUIRE(
      eventually([&] { return (type = discovered_type(tool, "Navigation", found)) != nullptr; }));
  CHECK(type->name == "Avionics::Navigation");
  CHECK(found.find("Avionics::NavFix") != nullptr);  // a dependency came along
  // Byte for byte the type idlc saw: the same type information again.
  const auto again = make_type_info(*type);
  const auto& want = spindle::topic_traits<Avionics::Navigation>::type_information;
  CHECK(again.information.size() == want.size());
  CHECK(std::memcmp(again.information.data(), want.data(), want.size()) == 0);
}
