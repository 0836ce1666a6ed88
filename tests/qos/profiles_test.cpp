// YAML QoS profiles and dds::core::QosProvider: the shipped profiles, inheritance within
// and across files, override order, includes, and every class of error with its exact
// file:line:key message.
#include <catch2/catch.hpp>

#include <dds/core/Exception.hpp>
#include <dds/core/QosProvider.hpp>

#include "qos/checks.hpp"
#include "qos/profiles.hpp"
#include "qos_names.hpp"
#include "support.hpp"

using dds::core::QosProvider;
namespace sq = spindle::qos;

namespace {

QosProvider shipped(const std::string& file, const std::string& profile = "") {
  return QosProvider((qos_test::profile_dir() / file).string(), profile);
}

// Loads `text` as `name` from inside a scratch folder, so messages name the file as given.
struct Scratch {
  qos_test::TempDir dir;
  qos_test::ScopedCwd cwd{dir.path()};
  qos_test::ScopedEnv path{"SPINDLE_QOS_PATH", std::nullopt};

  std::string invalid(const std::string& text, const std::string& name = "p.yaml") {
    dir.write(name, text);
    return qos_test::error_of<dds::core::InvalidArgumentError>([&] { QosProvider q(name); });
  }
  std::string inconsistent(const std::string& text, const std::string& name = "p.yaml") {
    dir.write(name, text);
    return qos_test::error_of<dds::core::InconsistentPolicyError>([&] { QosProvider q(name); });
  }
};

bool compatible(const QosProvider& w, const QosProvider& r) {
  return sq::incompatible_policies(w.publisher_qos(), w.datawriter_qos(), r.subscriber_qos(),
                                   r.datareader_qos())
      .empty();
}

}  // namespace

TEST_CASE("shipped profiles: unordered", "[profiles]") {
  const auto qp = shipped("unordered.yaml");
  CHECK(qp.profiles() == std::vector<std::string>{"unordered"});
  const auto w = qp.datawriter_qos();
  CHECK(w.policy<Consistency>().kind() == ConsistencyKind::UNORDERED);
  CHECK(w.policy<Reliability>().kind() == ReliabilityKind::BEST_EFFORT);
  CHECK(w.policy<Reliability>().max_blocking_time() == Duration::zero());
  CHECK(w.policy<History>() == History::KeepLast(1));
  CHECK(w.policy<Liveliness>().lease_duration() == ms(500));
  CHECK(w.policy<TransportPriority>().value() == 10);
  CHECK(w.policy<Engine>().window_size() == 256);
  CHECK(w.policy<Engine>().max_payload() == 512);
  const auto r = qp.datareader_qos();
  CHECK(r.policy<Consistency>().kind() == ConsistencyKind::UNORDERED);
  CHECK(r.policy<Reliability>().kind() == ReliabilityKind::BEST_EFFORT);
  CHECK(qp.topic_qos().policy<Consistency>().kind() == ConsistencyKind::UNORDERED);
  CHECK(compatible(qp, qp));
}

TEST_CASE("shipped profiles: atomic", "[profiles]") {
  const auto qp = shipped("atomic.yaml", "atomic");
  const auto w = qp.datawriter_qos();
  CHECK(w.policy<Consistency>().kind() == ConsistencyKind::ATOMIC);
  CHECK(w.policy<Reliability>() == Reliability::Reliable(ms(100)));
  CHECK(w.policy<History>() == History::KeepLast(16));
  CHECK(w.policy<ResourceLimits>() == ResourceLimits(4096, 256, 16));
  CHECK(w.policy<Liveliness>() == Liveliness(LivelinessKind::AUTOMATIC, Duration(1, 0)));
  CHECK(w.policy<Engine>() == Engine(128, 1024, 1u << 20));
  CHECK(qp.datareader_qos().policy<Consistency>().kind() == ConsistencyKind::ATOMIC);
  CHECK(qp.datareader_qos().policy<Reliability>().kind() == ReliabilityKind::RELIABLE);
  CHECK(qp.publisher_qos().policy<Presentation>() == Presentation::TopicAccessScope(false, true));
  CHECK(qp.subscriber_qos().policy<Presentation>() == Presentation::TopicAccessScope(false, true));
  CHECK(qp.participant_qos().policy<EntityFactory>().autoenable_created_entities());
  CHECK(qp.topic_qos().policy<History>().depth() == 16);
  CHECK(compatible(qp, qp));
  // An atomic reader does not match an unordered writer: consistency and reliability.
  const auto unordered = shipped("unordered.yaml");
  CHECK(sq::incompatible_policies(unordered.datawriter_qos(), qp.datareader_qos()) ==
        std::vector<QosPolicyId>{11, 0x8001});
  // An unordered reader takes an atomic writer's data.
  CHECK(sq::incompatible_policies(qp.datawriter_qos(), unordered.datareader_qos()).empty());
}

TEST_CASE("shipped profiles: volatile inherits from atomic across files", "[profiles]") {
  const auto qp = shipped("volatile.yaml");
  CHECK(qp.profiles() == std::vector<std::string>{"atomic", "volatile"});
  const auto w = qp.datawriter_qos();  // the file's only own profile is the default
  CHECK(w.policy<Consistency>().kind() == ConsistencyKind::VOLATILE);
  CHECK(w.policy<Durability>() == Durability::TransientLocal());
  CHECK(w.policy<DurabilityService>().history_depth() == 16);
  CHECK(w.policy<DurabilityService>().max_samples_per_instance() == 16);
  // Inherited unchanged from atomic.
  CHECK(w.policy<Reliability>() == Reliability::Reliable(ms(100)));
  CHECK(w.policy<History>() == History::KeepLast(16));
  CHECK(w.policy<Engine>().window_size() == 128);
  CHECK(qp.datareader_qos().policy<Durability>() == Durability::TransientLocal());
  CHECK(sq::effective_consistency(w.policy<Durability>(), w.policy<Consistency>()) ==
        ConsistencyKind::VOLATILE);
  CHECK(compatible(qp, qp));
  // The included profile stays available by id, unchanged.
  CHECK(qp.datawriter_qos("atomic") == shipped("atomic.yaml").datawriter_qos());
}

TEST_CASE("shipped profiles: logged and logged_batched", "[profiles]") {
  const auto qp = shipped("logged.yaml", "logged");
  const auto w = qp.datawriter_qos();
  CHECK(w.policy<Consistency>().kind() == ConsistencyKind::LOGGED);
  CHECK(w.policy<Consistency>().fsync() == FsyncKind::EVERY_SAMPLE);
  CHECK(w.policy<Durability>() == Durability::Persistent());
  CHECK(w.policy<History>().kind() == HistoryKind::KEEP_ALL);
  CHECK(w.policy<ResourceLimits>() == ResourceLimits(65536, 256, 4096));
  CHECK(w.policy<Reliability>().max_blocking_time() == Duration(1, 0));
  CHECK(w.policy<DurabilityService>().history_kind() == HistoryKind::KEEP_ALL);
  CHECK(w.policy<Liveliness>().lease_duration() == Duration(1, 0));  // from atomic
  const auto b = qp.datawriter_qos("logged_batched");
  CHECK(b.policy<Consistency>() == Consistency::LoggedPeriodicFsync(ms(10)));
  CHECK(b.policy<Durability>() == Durability::Persistent());  // from logged
  CHECK(qp.topic_qos("logged_batched").policy<Consistency>().fsync() == FsyncKind::PERIODIC);
  CHECK(qp.datareader_qos("logged_batched") == qp.datareader_qos());
  CHECK(compatible(qp, qp));
  CHECK(compatible(QosProvider(qp.uri(), "logged_batched"), qp));
  // A logged writer satisfies readers of every weaker level.
  for (const char* f : {"unordered.yaml", "atomic.yaml", "volatile.yaml"}) {
    INFO(f);
    CHECK(compatible(qp, shipped(f)));
  }
}

TEST_CASE("profiles: inheritance overrides key by key, most derived last", "[profiles]") {
  Scratch s;
  s.dir.write("base.yaml", R"(version: 1
profiles:
  base:
    writer:
      reliability: {kind: reliable, max_blocking_time: 5ms}
      history: {kind: keep_last, depth: 5}
      deadline: {period: 100ms}
    reader:
      deadline: {period: 100ms}
)");
  s.dir.write("sub/child.yaml", R"(version: 1
include: [../base.yaml]
profiles:
  child:
    base: base
    writer:
      reliability: {kind: best_effort}
      history: {depth: 7}
  grandchild:
    base: child
    description: three levels
    writer:
      history: {depth: 9}
      ownership_strength: {value: 4}
)");
  const QosProvider qp("sub/child.yaml", "grandchild");
  const auto w = qp.datawriter_qos();
  CHECK(w.policy<History>() == History::KeepLast(9));                     // grandchild
  CHECK(w.policy<Reliability>().kind() == ReliabilityKind::BEST_EFFORT);  // child
  CHECK(w.policy<Reliability>().max_blocking_time() == ms(5));            // base
  CHECK(w.policy<Deadline>().period() == ms(100));                        // base
  CHECK(w.policy<OwnershipStrength>().value() == 4);
  CHECK(qp.datareader_qos().policy<Deadline>().period() == ms(100));
  CHECK(qp.datawriter_qos("child").policy<History>().depth() == 7);
  CHECK(qp.datawriter_qos("child").policy<OwnershipStrength>().value() == 0);
  CHECK(qp.datawriter_qos("base").policy<Reliability>().kind() == ReliabilityKind::RELIABLE);
  // Sections a profile never mentions keep the specification's defaults.
  CHECK(qp.topic_qos() == dds::topic::qos::TopicQos());
  CHECK(qp.profiles() == std::vector<std::string>{"base", "child", "grandchild"});
}

TEST_CASE("profiles: includes resolve next to the file, then on SPINDLE_QOS_PATH", "[profiles]") {
  qos_test::TempDir dir;
  const auto lib = dir.path() / "lib";
  dir.write("lib/common.yaml",
            "version: 1\nprofiles:\n  common:\n    reader:\n"
            "      history: {depth: 3}\n");
  // A diamond: a includes b and c, both include common; common is read once.
  dir.write("app/b.yaml", "version: 1\ninclude: [common.yaml]\nprofiles:\n  b: {base: common}\n");
  dir.write("app/c.yaml", "version: 1\ninclude: [common.yaml]\nprofiles:\n  c: {base: common}\n");
  const auto a = dir.write("app/a.yaml",
                           "version: 1\ninclude: [b.yaml, c.yaml, atomic.yaml]\nprofiles:\n"
                           "  a:\n    base: c\n    writer: {consistency: {kind: logged}}\n");
  qos_test::ScopedEnv env("SPINDLE_QOS_PATH",
                          lib.string() + "::" + qos_test::profile_dir().string());
  const QosProvider qp(a.string());
  CHECK(qp.datareader_qos().policy<History>().depth() == 3);
  CHECK(qp.datawriter_qos().policy<Consistency>().kind() == ConsistencyKind::LOGGED);
  CHECK(qp.profiles() == std::vector<std::string>{"a", "atomic", "b", "c", "common"});
  // file:// URIs and the search path work for the file itself too.
  CHECK(QosProvider("file://" + a.string()).datawriter_qos() == qp.datawriter_qos());
  CHECK(QosProvider("atomic.yaml").datawriter_qos().policy<History>().depth() == 16);
  CHECK(QosProvider("common.yaml").profiles() == std::vector<std::string>{"common"});
}

TEST_CASE("profile errors: the example of the brief", "[profiles][errors]") {
  Scratch s;
  CHECK(s.invalid(R"(version: 1
profiles:
  atomic:
    topic:
      history: {kind: keep_last, depth: 1}
    reader:
      history: {kind: keep_last, depth: 1}
    writer:
      reliability: {kind: reliable}
      history:
        kind: keep_last
        depth: 0
)",
                  "atomic.yaml") ==
        "atomic.yaml:12: profiles.atomic.writer.history.depth: must be >= 1, got 0");
}

TEST_CASE("data_representation names encodings, and nothing else", "[profiles]") {
  Scratch s;
  CHECK(s.invalid("version: 1\nprofiles:\n  a:\n    writer:\n      data_representation: "
                  "{value: [XCDR2, XCDR1]}\n")
            .empty());
  const QosProvider qp("p.yaml");
  CHECK(qp.datawriter_qos("a").policy<DataRepresentation>().value() ==
        DataRepresentationIdSeq{DataRepresentationId::XCDR2, DataRepresentationId::XCDR1});
  CHECK(s.invalid("version: 1\nprofiles:\n  a:\n    writer:\n      data_representation: "
                  "{value: [XCDR2, XCDR3]}\n") ==
        "p.yaml:5: profiles.a.writer.data_representation.value[1]: is 'XCDR3', list of: XCDR1, "
        "XML, XCDR2");
}

TEST_CASE("profile errors: unknown keys at every level", "[profiles][errors]") {
  Scratch s;
  CHECK(s.invalid("version: 1\nprofile: {}\n") ==
        "p.yaml:2: profile: unknown key (allowed: version, include, profiles)");
  CHECK(s.invalid("version: 1\nprofiles:\n  a:\n    writr: {}\n") ==
        "p.yaml:4: profiles.a.writr: unknown key (allowed: base, description, participant, "
        "topic, publisher, subscriber, writer, reader)");
  // A policy the entity does not have is an unknown key of that section.
  CHECK(s.invalid("version: 1\nprofiles:\n  a:\n    reader:\n      ownership_strength: "
                  "{value: 1}\n") ==
        "p.yaml:5: profiles.a.reader.ownership_strength: unknown key (allowed: user_data, "
        "durability, deadline, latency_budget, liveliness, reliability, destination_order, "
        "history, resource_limits, ownership, time_based_filter, reader_data_lifecycle, "
        "consistency, engine, data_representation)");
  CHECK(s.invalid("version: 1\nprofiles:\n  a:\n    writer:\n      history:\n        dept: 3\n") ==
        "p.yaml:6: profiles.a.writer.history.dept: unknown key (allowed: kind, depth)");
  CHECK(s.invalid("version: 1\nprofiles:\n  a:\n    publisher:\n      partition: {names: [a]}\n"
                  "      partition: {names: [b]}\n") ==
        "p.yaml:6: profiles.a.publisher.partition: given twice");
}

// A writer section's body (after "version: 1\nprofiles:\n  a:\n    writer:\n", so the
// body starts on line 5) and the exact error.
const std::vector<std::pair<std::string, std::string>> kWriterErrors = {
    {"history: {depth: deep}", "profiles.a.writer.history.depth: expected an integer, got 'deep'"},
    {"history: {kind: keep_some}",
     "profiles.a.writer.history.kind: expected keep_last or keep_all, got 'keep_some'"},
    {"history: 3", "profiles.a.writer.history: expected a mapping, got '3'"},
    {"deadline: {period: 10}",
     "profiles.a.writer.deadline.period: expected a duration (an integer with ns, us, ms, s or "
     "min, or 0, or infinite), got '10'"},
    {"writer_data_lifecycle: {autodispose_unregistered_instances: 1}",
     "profiles.a.writer.writer_data_lifecycle.autodispose_unregistered_instances: expected "
     "true or false, got '1'"},
    {"resource_limits: {max_samples: 0}",
     "profiles.a.writer.resource_limits.max_samples: must be >= 1 or unlimited, got 0"},
    {"engine: {window_size: 70000}",
     "profiles.a.writer.engine.window_size: must be in 1..65536, got 70000"},
    {"consistency: {kind: eventual}",
     "profiles.a.writer.consistency.kind: expected unordered, atomic, volatile or logged, got "
     "'eventual'"},
    {"user_data: {value: [1, 2]}",
     "profiles.a.writer.user_data.value: expected a string, got a list"},
};

TEST_CASE("profile errors: wrong types and out-of-range values", "[profiles][errors]") {
  Scratch s;
  for (const auto& [body, message] : kWriterErrors) {
    INFO(body);
    CHECK(s.invalid("version: 1\nprofiles:\n  a:\n    writer:\n      " + body + "\n") ==
          "p.yaml:5: " + message);
  }
  CHECK(s.invalid("version: 1\nprofiles:\n  a:\n    subscriber:\n      partition: {names: x}\n") ==
        "p.yaml:5: profiles.a.subscriber.partition.names: expected a list of strings, got 'x'");
  CHECK(s.invalid("version: 1\nprofiles: [a]\n") ==
        "p.yaml:2: profiles: expected a mapping of profile names");
  CHECK(s.invalid("version: 1\nprofiles:\n  a b: {}\n") ==
        "p.yaml:3: profiles.a b: a profile name holds letters, digits, '_', '-' and '.' only, "
        "got 'a b'");
  CHECK(s.invalid("profiles: {}\n") == "p.yaml:1: version: missing (this loader reads version 1)");
  CHECK(s.invalid("version: 2\nprofiles: {}\n") ==
        "p.yaml:1: version: unsupported version 2 (this loader reads version 1)");
}

TEST_CASE("profile errors: contradictory policies name the most derived setting",
          "[profiles][errors]") {
  Scratch s;
  CHECK(s.inconsistent(R"(version: 1
profiles:
  a:
    writer:
      resource_limits: {max_samples_per_instance: 4}
      history:
        depth: 8
)") == "p.yaml:7: profiles.a.writer.history.depth: History.depth (8) > "
       "ResourceLimits.max_samples_per_instance (4)");
  // The derived profile set the limit that breaks the base's depth: its line is named.
  CHECK(s.inconsistent(R"(version: 1
profiles:
  base:
    reader:
      history: {depth: 8}
  derived:
    base: base
    reader:
      resource_limits: {max_samples_per_instance: 4}
)") == "p.yaml:9: profiles.derived.reader.resource_limits.max_samples_per_instance: "
       "History.depth (8) > ResourceLimits.max_samples_per_instance (4)");
  // Only base lines are involved: named, with the profile being resolved.
  CHECK(s.inconsistent(R"(version: 1
profiles:
  base:
    reader:
      history: {kind: keep_all, depth: 8}
      resource_limits: {max_samples_per_instance: 4}
  derived:
    base: base
    reader:
      history: {kind: keep_last}
)") == "p.yaml:6: profiles.base.reader.resource_limits.max_samples_per_instance: "
       "History.depth (8) > ResourceLimits.max_samples_per_instance (4) (in profile "
       "'derived')");
  CHECK(s.inconsistent(R"(version: 1
profiles:
  a:
    reader:
      deadline: {period: 10ms}
      time_based_filter: {minimum_separation: 20ms}
)") == "p.yaml:6: profiles.a.reader.time_based_filter.minimum_separation: Deadline.period "
       "(10ms) < TimeBasedFilter.minimum_separation (20ms)");
  CHECK(s.inconsistent(R"(version: 1
profiles:
  a:
    topic:
      consistency: {kind: logged, fsync: periodic}
)") == "p.yaml:5: profiles.a.topic.consistency.fsync: Consistency.fsync_period must be finite "
       "and > 0 with fsync PERIODIC, got 0");
}

TEST_CASE("profile errors: bases, cycles, includes, syntax, files, profiles",
          "[profiles][errors]") {
  Scratch s;
  CHECK(s.invalid("version: 1\nprofiles:\n  a:\n    base: nope\n") ==
        "p.yaml:4: profiles.a.base: unknown base profile 'nope' (known: a)");
  CHECK(s.invalid("version: 1\nprofiles:\n  a:\n    base: a\n") ==
        "p.yaml:4: profiles.a.base: inheritance cycle: a -> a");
  CHECK(s.invalid("version: 1\nprofiles:\n  a:\n    base: b\n  b:\n    base: c\n  c:\n"
                  "    base: a\n") ==
        "p.yaml:8: profiles.c.base: inheritance cycle: a -> b -> c -> a");
  CHECK(s.invalid("version: 1\nprofiles:\n  a:\n    base: \"\"\n") ==
        "p.yaml:4: profiles.a.base: must name a profile");
  CHECK(s.invalid("version: 1\nprofiles:\n  a:\n    writer: {history: {depth: 1}\n")
            .rfind("p.yaml:5: syntax: ", 0) == 0);
  CHECK(s.invalid("version: 1\ninclude: [missing.yaml]\n")
            .rfind("p.yaml:2: include[0]: cannot find 'missing.yaml' (looked in ", 0) == 0);
  CHECK(s.invalid("version: 1\ninclude: missing.yaml\n") ==
        "p.yaml:2: include: expected a list of file names");
  s.dir.write("x.yaml", "version: 1\ninclude: [y.yaml]\n");
  s.dir.write("y.yaml", "version: 1\ninclude: [x.yaml]\n");
  CHECK(qos_test::error_of<dds::core::InvalidArgumentError>([] { QosProvider q("x.yaml"); }) ==
        "y.yaml:2: include[0]: include cycle: x.yaml -> y.yaml -> x.yaml");
  s.dir.write("one.yaml", "version: 1\nprofiles:\n  shared: {}\n");
  CHECK(s.invalid("version: 1\ninclude: [one.yaml]\nprofiles:\n  shared: {}\n") ==
        "p.yaml:4: profiles.shared: profile 'shared' is already defined at one.yaml:3");
  // Errors inside an included file name that file.
  s.dir.write("bad.yaml", "version: 1\nprofiles:\n  b:\n    reader: {history: {depth: -1}}\n");
  CHECK(s.invalid("version: 1\ninclude: [bad.yaml]\n") ==
        "bad.yaml:4: profiles.b.reader.history.depth: must be >= 1, got -1");

  CHECK(qos_test::error_of<dds::core::InvalidArgumentError>(
            [] { QosProvider q("no-such-file.yaml"); })
            .rfind("no-such-file.yaml: cannot find the QoS profile file (looked in the current "
                   "directory, ",
                   0) == 0);
  s.dir.write("two.yaml", "version: 1\nprofiles:\n  a: {}\n  b: {}\n");
  CHECK(qos_test::error_of<dds::core::InvalidArgumentError>([] {
          QosProvider q("two.yaml", "c");
        }) == "two.yaml: no QoS profile 'c' (known: a, b)");
  const QosProvider two("two.yaml");
  CHECK(qos_test::error_of<dds::core::InvalidArgumentError>([&] {
          (void)two.datareader_qos("zzz");
        }) == "two.yaml: no QoS profile 'zzz' (known: a, b)");
  CHECK(
      qos_test::error_of<dds::core::PreconditionNotMetError>([&] { (void)two.datawriter_qos(); }) ==
      "two.yaml: no default QoS profile: name one in QosProvider(uri, profile) or pass "
      "an id (profiles: a, b)");
  CHECK(two.datawriter_qos("b") == dds::pub::qos::DataWriterQos());
  CHECK(QosProvider("two.yaml", "b").subscriber_qos() == dds::sub::qos::SubscriberQos());
}

TEST_CASE("profiles: every policy of every section can be set from YAML", "[profiles]") {
  const auto lib = sq::ProfileLibrary::parse(R"(version: 1
profiles:
  all:
    participant:
      user_data: {value: "node-7"}
      entity_factory: {autoenable_created_entities: false}
    publisher:
      presentation: {access_scope: group, coherent_access: true, ordered_access: true}
      partition: {names: [flight, "engine.*"]}
      group_data: {value: pub}
      entity_factory: {autoenable_created_entities: false}
    topic:
      topic_data: {value: "t"}
      durability: {kind: transient}
      durability_service:
        service_cleanup_delay: 5s
        history_kind: keep_all
        history_depth: 3
        max_samples: 30
        max_instances: 10
        max_samples_per_instance: 3
      deadline: {period: 50ms}
      latency_budget: {duration: 2ms}
      liveliness: {kind: manual_by_topic, lease_duration: 2s}
      reliability: {kind: reliable, max_blocking_time: infinite}
      destination_order: {kind: by_source_timestamp}
      history: {kind: keep_last, depth: 3}
      resource_limits: {max_samples: 30, max_instances: 10, max_samples_per_instance: 3}
      transport_priority: {value: -2}
      lifespan: {duration: 1min}
      ownership: {kind: exclusive}
      consistency: {kind: logged, fsync: never}
      engine: {window_size: 64, max_payload: 256, rdmc_block_size: 65536, rdmc_algorithm: chain}
    writer:
      ownership_strength: {value: 12}
      writer_data_lifecycle: {autodispose_unregistered_instances: false}
    reader:
      time_based_filter: {minimum_separation: 10ms}
      reader_data_lifecycle:
        autopurge_nowriter_samples_delay: 30s
        autopurge_disposed_samples_delay: 1s
)",
                                             "all.yaml", {});
  const auto& q = lib.profile("all");
  CHECK(q.participant.policy<UserData>().value() ==
        dds::core::ByteSeq{'n', 'o', 'd', 'e', '-', '7'});
  CHECK_FALSE(q.participant.policy<EntityFactory>().autoenable_created_entities());
  CHECK(q.publisher.policy<Presentation>() == Presentation::GroupAccessScope(true, true));
  CHECK(q.publisher.policy<Partition>().name() == dds::core::StringSeq{"flight", "engine.*"});
  CHECK(q.publisher.policy<GroupData>().value().size() == 3);
  const auto& t = q.topic;
  CHECK(t.policy<TopicData>().value() == dds::core::ByteSeq{'t'});
  CHECK(t.policy<Durability>() == Durability::Transient());
  CHECK(t.policy<DurabilityService>() ==
        DurabilityService(Duration(5, 0), HistoryKind::KEEP_ALL, 3, 30, 10, 3));
  CHECK(t.policy<Deadline>().period() == ms(50));
  CHECK(t.policy<LatencyBudget>().duration() == ms(2));
  CHECK(t.policy<Liveliness>() == Liveliness::ManualByTopic(Duration(2, 0)));
  CHECK(t.policy<Reliability>() == Reliability::Reliable(Duration::infinite()));
  CHECK(t.policy<DestinationOrder>() == DestinationOrder::SourceTimestamp());
  CHECK(t.policy<History>() == History::KeepLast(3));
  CHECK(t.policy<ResourceLimits>() == ResourceLimits(30, 10, 3));
  CHECK(t.policy<TransportPriority>().value() == -2);
  CHECK(t.policy<Lifespan>().duration() == Duration(60, 0));
  CHECK(t.policy<Ownership>() == Ownership::Exclusive());
  CHECK(t.policy<Consistency>() == Consistency::LoggedNoFsync());
  CHECK(t.policy<Engine>() == Engine(64, 256, 65536, spindle::policy::RdmcAlgorithm::CHAIN));
  CHECK(q.writer.policy<OwnershipStrength>().value() == 12);
  CHECK_FALSE(q.writer.policy<WriterDataLifecycle>().autodispose_unregistered_instances());
  CHECK(q.reader.policy<TimeBasedFilter>().minimum_separation() == ms(10));
  CHECK(q.reader.policy<ReaderDataLifecycle>() ==
        ReaderDataLifecycle(Duration(30, 0), Duration(1, 0)));
  // Writer and reader sections are independent of the topic section.
  CHECK(q.writer.policy<History>() == History());
  CHECK(lib.own_names() == std::vector<std::string>{"all"});
}
