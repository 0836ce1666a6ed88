// Topic listeners (DDS-PSM-Cxx §7.5.1): TopicListener<T> for one typed topic and
// AnyTopicListener for the participant. INCONSISTENT_TOPIC is raised when another member
// of the domain uses the topic's name with a different type.
//
// Threading: callbacks run on the participant's listener thread.
#pragma once

#include <dds/core/status/Status.hpp>

namespace dds::topic {

template <typename T>
class Topic;
class AnyTopic;

template <typename T>
class TopicListener {
 public:
  virtual ~TopicListener() = default;
  virtual void on_inconsistent_topic(Topic<T>& topic,
                                     const dds::core::status::InconsistentTopicStatus& status) = 0;
};

template <typename T>
class NoOpTopicListener : public virtual TopicListener<T> {
 public:
  void on_inconsistent_topic(Topic<T>&,
                             const dds::core::status::InconsistentTopicStatus&) override {}
};

class AnyTopicListener {
 public:
  virtual ~AnyTopicListener() = default;
  virtual void on_inconsistent_topic(AnyTopic& topic,
                                     const dds::core::status::InconsistentTopicStatus& status) = 0;
};

class NoOpAnyTopicListener : public virtual AnyTopicListener {
 public:
  void on_inconsistent_topic(AnyTopic&,
                             const dds::core::status::InconsistentTopicStatus&) override {}
};

}  // namespace dds::topic
