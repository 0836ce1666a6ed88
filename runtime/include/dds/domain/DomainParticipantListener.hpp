// dds::domain::DomainParticipantListener: hears every status of every entity of the
// participant that the entity's own listener (and its publisher's or subscriber's) did not
// take (DDS-PSM-Cxx §7.5.1). NoOpDomainParticipantListener implements all as nothing.
//
// Threading: callbacks run on the participant's listener thread.
#pragma once

#include <dds/pub/DataWriterListener.hpp>
#include <dds/sub/DataReaderListener.hpp>
#include <dds/topic/TopicListener.hpp>

namespace dds::domain {

class DomainParticipantListener : public virtual dds::pub::PublisherListener,
                                  public virtual dds::sub::SubscriberListener,
                                  public virtual dds::topic::AnyTopicListener {};

class NoOpDomainParticipantListener : public virtual DomainParticipantListener,
                                      public virtual dds::pub::NoOpPublisherListener,
                                      public virtual dds::sub::NoOpSubscriberListener,
                                      public virtual dds::topic::NoOpAnyTopicListener {};

}  // namespace dds::domain
