// Statuses: StatusMask bits, SampleRejectedState, the StatusBook's counting and the DCPS
// rule that reading a status resets its *_change fields and its changed flag; the
// dds::core::Entity base.
#include <array>
#include <functional>
#include <memory>
#include <vector>

#include <catch2/catch.hpp>
#include <dds/core/Entity.hpp>
#include <dds/core/status/State.hpp>
#include <dds/core/status/Status.hpp>
#include <spindle/detail/entity_delegate.hpp>
#include <spindle/detail/status_book.hpp>

using dds::core::InstanceHandle;
using dds::core::status::SampleRejectedState;
using dds::core::status::StatusMask;
using spindle::detail::StatusBook;
namespace st = dds::core::status;

TEST_CASE("StatusMask bits are the DCPS StatusKind values", "[dcps][status]") {
  CHECK(StatusMask::inconsistent_topic().to_ulong() == 0x0001);
  CHECK(StatusMask::offered_deadline_missed().to_ulong() == 0x0002);
  CHECK(StatusMask::requested_deadline_missed().to_ulong() == 0x0004);
  CHECK(StatusMask::offered_incompatible_qos().to_ulong() == 0x0020);
  CHECK(StatusMask::requested_incompatible_qos().to_ulong() == 0x0040);
  CHECK(StatusMask::sample_lost().to_ulong() == 0x0080);
  CHECK(StatusMask::sample_rejected().to_ulong() == 0x0100);
  CHECK(StatusMask::data_on_readers().to_ulong() == 0x0200);
  CHECK(StatusMask::data_available().to_ulong() == 0x0400);
  CHECK(StatusMask::liveliness_lost().to_ulong() == 0x0800);
  CHECK(StatusMask::liveliness_changed().to_ulong() == 0x1000);
  CHECK(StatusMask::publication_matched().to_ulong() == 0x2000);
  CHECK(StatusMask::subscription_matched().to_ulong() == 0x4000);
  CHECK(StatusMask::all().to_ulong() == 0x7fe7);
  CHECK(StatusMask::none().to_ulong() == 0);
  CHECK(StatusMask() == StatusMask::none());
}

TEST_CASE("StatusMask combines with the bit operators and the PSM stream idiom", "[dcps][status]") {
  StatusMask m = StatusMask::data_available() | StatusMask::sample_lost();
  CHECK(m.count() == 2);
  CHECK((m & StatusMask::sample_lost()) == StatusMask::sample_lost());
  CHECK(m.intersects(StatusMask::data_available()));
  CHECK_FALSE(m.intersects(StatusMask::liveliness_lost()));
  m << StatusMask::liveliness_lost();
  CHECK(m.test(11));
  m >> StatusMask::data_available();
  CHECK_FALSE(m.test(10));
  CHECK((StatusMask::all() & ~StatusMask::data_available()).count() == 12);
  CHECK((m ^ m) == StatusMask::none());
  StatusMask x(0x0400u);
  CHECK(x == StatusMask::data_available());
}

TEST_CASE("SampleRejectedState values", "[dcps][status]") {
  CHECK(SampleRejectedState::not_rejected().none());
  CHECK(SampleRejectedState::rejected_by_instances_limit().to_ulong() == 1);
  CHECK(SampleRejectedState::rejected_by_samples_limit().to_ulong() == 2);
  CHECK(SampleRejectedState::rejected_by_samples_per_instance_limit().to_ulong() == 4);
  CHECK(SampleRejectedState() == SampleRejectedState::not_rejected());
}

TEST_CASE("a status read resets its change counts and its flag", "[dcps][status]") {
  StatusBook book;
  CHECK(book.status_changes() == StatusMask::none());
  (void)book.sample_lost(2);
  (void)book.sample_lost(1);
  CHECK(book.status_changes() == StatusMask::sample_lost());
  const auto peeked = book.peek<st::SampleLostStatus>();
  CHECK(peeked.total_count_change() == 3);
  CHECK(book.status_changes() == StatusMask::sample_lost());  // peek resets nothing

  const auto first = book.read<st::SampleLostStatus>();
  CHECK(first.total_count() == 3);
  CHECK(first.total_count_change() == 3);
  CHECK(book.status_changes() == StatusMask::none());
  const auto second = book.read<st::SampleLostStatus>();
  CHECK(second.total_count() == 3);
  CHECK(second.total_count_change() == 0);
  (void)book.sample_lost(1);
  const auto third = book.read<st::SampleLostStatus>();
  CHECK(third.total_count() == 4);
  CHECK(third.total_count_change() == 1);
}

TEST_CASE("an event consumed by a listener leaves no change pending", "[dcps][status]") {
  StatusBook book;
  const auto handed = book.sample_rejected(SampleRejectedState::rejected_by_samples_limit(),
                                           InstanceHandle(9), /*consume=*/true);
  CHECK(handed.total_count() == 1);
  CHECK(handed.total_count_change() == 1);
  CHECK(handed.last_reason() == SampleRejectedState::rejected_by_samples_limit());
  CHECK(handed.last_instance_handle() == InstanceHandle(9));
  CHECK(book.status_changes() == StatusMask::none());
  const auto later = book.read<st::SampleRejectedStatus>();
  CHECK(later.total_count() == 1);
  CHECK(later.total_count_change() == 0);
}

TEST_CASE("matched statuses count current and total matches", "[dcps][status]") {
  StatusBook book;
  (void)book.subscription_matched(+1, InstanceHandle(1));
  (void)book.subscription_matched(+1, InstanceHandle(2));
  (void)book.subscription_matched(-1, InstanceHandle(1));
  auto s = book.read<st::SubscriptionMatchedStatus>();
  CHECK(s.total_count() == 2);
  CHECK(s.total_count_change() == 2);
  CHECK(s.current_count() == 1);
  CHECK(s.current_count_change() == 1);
  CHECK(s.last_publication_handle() == InstanceHandle(1));
  (void)book.subscription_matched(-1, InstanceHandle(2));
  s = book.read<st::SubscriptionMatchedStatus>();
  CHECK(s.total_count() == 2);
  CHECK(s.total_count_change() == 0);
  CHECK(s.current_count() == 0);
  CHECK(s.current_count_change() == -1);

  (void)book.publication_matched(+1, InstanceHandle(5));
  const auto p = book.read<st::PublicationMatchedStatus>();
  CHECK(p.current_count() == 1);
  CHECK(p.last_subscription_handle() == InstanceHandle(5));
}

TEST_CASE("liveliness changed counts alive and not-alive writers", "[dcps][status]") {
  StatusBook book;
  (void)book.liveliness_changed(+1, 0, InstanceHandle(1));
  (void)book.liveliness_changed(+1, 0, InstanceHandle(2));
  (void)book.liveliness_changed(-1, +1, InstanceHandle(2));
  CHECK(book.status_changes() == StatusMask::liveliness_changed());
  auto s = book.read<st::LivelinessChangedStatus>();
  CHECK(s.alive_count() == 1);
  CHECK(s.not_alive_count() == 1);
  CHECK(s.alive_count_change() == 1);
  CHECK(s.not_alive_count_change() == 1);
  CHECK(s.last_publication_handle() == InstanceHandle(2));
  s = book.read<st::LivelinessChangedStatus>();
  CHECK(s.alive_count_change() == 0);
  CHECK(s.not_alive_count_change() == 0);
  CHECK(s.alive_count() == 1);
}

TEST_CASE("incompatible QoS counts each failed policy", "[dcps][status]") {
  StatusBook book;
  const std::array<dds::core::policy::QosPolicyId, 2> first{11, 4};  // RELIABILITY, DEADLINE
  const std::array<dds::core::policy::QosPolicyId, 1> second{11};
  (void)book.requested_incompatible_qos(first);
  (void)book.requested_incompatible_qos(second);
  const auto s = book.read<st::RequestedIncompatibleQosStatus>();
  CHECK(s.total_count() == 2);
  CHECK(s.total_count_change() == 2);
  CHECK(s.last_policy_id() == 11);
  REQUIRE(s.policies().size() == 2);
  CHECK(s.policies()[0] == dds::core::policy::QosPolicyCount(11, 2));
  CHECK(s.policies()[1] == dds::core::policy::QosPolicyCount(4, 1));
  (void)book.offered_incompatible_qos(second);
  CHECK(book.status_changes() == StatusMask::offered_incompatible_qos());
}

TEST_CASE("each status raises its own flag and a read clears only that one", "[dcps][status]") {
  const std::array<dds::core::policy::QosPolicyId, 1> reliability{11};
  struct Event {
    StatusMask bit;
    std::function<void(StatusBook&)> raise;
    std::function<void(StatusBook&)> read;
  };
  const std::vector<Event> events{
      {StatusMask::inconsistent_topic(), [](auto& b) { (void)b.inconsistent_topic(); },
       [](auto& b) { (void)b.template read<st::InconsistentTopicStatus>(); }},
      {StatusMask::sample_lost(), [](auto& b) { (void)b.sample_lost(1); },
       [](auto& b) { (void)b.template read<st::SampleLostStatus>(); }},
      {StatusMask::sample_rejected(),
       [](auto& b) {
         (void)b.sample_rejected(SampleRejectedState::rejected_by_samples_limit(),
                                 InstanceHandle(1));
       },
       [](auto& b) { (void)b.template read<st::SampleRejectedStatus>(); }},
      {StatusMask::liveliness_lost(), [](auto& b) { (void)b.liveliness_lost(); },
       [](auto& b) { (void)b.template read<st::LivelinessLostStatus>(); }},
      {StatusMask::liveliness_changed(),
       [](auto& b) { (void)b.liveliness_changed(1, 0, InstanceHandle(1)); },
       [](auto& b) { (void)b.template read<st::LivelinessChangedStatus>(); }},
      {StatusMask::offered_deadline_missed(),
       [](auto& b) { (void)b.offered_deadline_missed(InstanceHandle(1)); },
       [](auto& b) { (void)b.template read<st::OfferedDeadlineMissedStatus>(); }},
      {StatusMask::requested_deadline_missed(),
       [](auto& b) { (void)b.requested_deadline_missed(InstanceHandle(1)); },
       [](auto& b) { (void)b.template read<st::RequestedDeadlineMissedStatus>(); }},
      {StatusMask::offered_incompatible_qos(),
       [&](auto& b) { (void)b.offered_incompatible_qos(reliability); },
       [](auto& b) { (void)b.template read<st::OfferedIncompatibleQosStatus>(); }},
      {StatusMask::requested_incompatible_qos(),
       [&](auto& b) { (void)b.requested_incompatible_qos(reliability); },
       [](auto& b) { (void)b.template read<st::RequestedIncompatibleQosStatus>(); }},
      {StatusMask::publication_matched(),
       [](auto& b) { (void)b.publication_matched(1, InstanceHandle(1)); },
       [](auto& b) { (void)b.template read<st::PublicationMatchedStatus>(); }},
      {StatusMask::subscription_matched(),
       [](auto& b) { (void)b.subscription_matched(1, InstanceHandle(1)); },
       [](auto& b) { (void)b.template read<st::SubscriptionMatchedStatus>(); }},
  };
  StatusBook book;
  StatusMask all;
  for (const auto& e : events) {
    e.raise(book);
    all |= e.bit;
    CHECK(book.status_changes() == all);
  }
  CHECK(all == StatusMask::all() >> StatusMask::data_on_readers() >> StatusMask::data_available());
  for (const auto& e : events) {
    e.read(book);
    all >> e.bit;
    CHECK(book.status_changes() == all);
  }
}

TEST_CASE("flag-only statuses are raised and cleared explicitly", "[dcps][status]") {
  StatusBook book;
  book.set_changes(StatusMask::data_available() | StatusMask::data_on_readers());
  CHECK(book.status_changes().count() == 2);
  book.clear_changes(StatusMask::data_available());
  CHECK(book.status_changes() == StatusMask::data_on_readers());
}

TEST_CASE("an Entity is a reference: copies are equal, null throws", "[dcps][status]") {
  auto delegate = std::make_shared<spindle::detail::EntityDelegate>(InstanceHandle(17));
  dds::core::Entity e(delegate);
  dds::core::Entity copy = e;
  dds::core::Entity other(std::make_shared<spindle::detail::EntityDelegate>(InstanceHandle(17)));
  CHECK(e == copy);
  CHECK_FALSE(e == other);
  CHECK(e.instance_handle() == InstanceHandle(17));

  delegate->statuses().sample_lost(1);
  CHECK(copy.status_changes() == StatusMask::sample_lost());

  dds::core::Entity nil;
  CHECK(nil.is_nil());
  CHECK(nil == dds::core::null);
  CHECK_THROWS_AS(nil.status_changes(), dds::core::NullReferenceError);
  CHECK_THROWS_AS(nil.close(), dds::core::NullReferenceError);
}

TEST_CASE("a closed Entity refuses every operation", "[dcps][status]") {
  dds::core::Entity e(std::make_shared<spindle::detail::EntityDelegate>(InstanceHandle(1), false));
  CHECK_FALSE(e->is_enabled());
  e.enable();
  CHECK(e->is_enabled());
  e.close();
  CHECK_THROWS_AS(e.close(), dds::core::AlreadyClosedError);
  CHECK_THROWS_AS(e.status_changes(), dds::core::AlreadyClosedError);
  CHECK_THROWS_AS(e.instance_handle(), dds::core::AlreadyClosedError);
  CHECK_THROWS_AS(e.enable(), dds::core::AlreadyClosedError);
  CHECK_THROWS_AS(e.retain(), dds::core::AlreadyClosedError);
}
