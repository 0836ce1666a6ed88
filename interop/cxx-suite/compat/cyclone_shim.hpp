// The handful of Cyclone DDS C-API names that cyclonedds-cxx's tests and examples use as
// scaffolding — clocks, sleeps, a mutex, a condition variable, threads, the process id, an
// atomic counter, status and policy numbers — written over the C++ standard library and
// POSIX, so that those files compile against Spindle DDS as written. Nothing here touches a
// DDS entity: a test that calls the C API on an entity is edited instead (edits.txt).
//
// The values of the status and policy constants are Cyclone DDS 0.10.2's (its dds_status_id
// enumeration is contiguous, unlike the ISO C++ PSM's StatusMask bits), so a test behaves as
// it does on Cyclone: its listeners and its waits use these numbers on both sides.
//
// Only the harness's compat/ include directory makes these visible (docs/dev/cxx-suite.md); the
// installed Cyclone DDS headers under /usr/include/dds are never reached (run.sh checks).
// Thread safety: the mutex, condition and atomic helpers are what they wrap; nothing else
// keeps state.
#pragma once

#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cinttypes>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <mutex>
#include <thread>

// --- time -----------------------------------------------------------------------------
using dds_time_t = int64_t;      // nanoseconds since the epoch
using dds_duration_t = int64_t;  // nanoseconds
using dds_return_t = int32_t;
using dds_instance_handle_t = uint64_t;

#define DDS_RETCODE_OK 0
#define DDS_RETCODE_ERROR -1
#define DDS_INFINITY INT64_MAX
#define DDS_NSECS_IN_SEC INT64_C(1000000000)
#define DDS_NSECS_IN_MSEC INT64_C(1000000)
#define DDS_NSECS_IN_USEC INT64_C(1000)
#define DDS_SECS(n) ((n)*DDS_NSECS_IN_SEC)
#define DDS_MSECS(n) ((n)*DDS_NSECS_IN_MSEC)
#define DDS_USECS(n) ((n)*DDS_NSECS_IN_USEC)

inline dds_time_t dds_time() {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<dds_time_t>(ts.tv_sec) * DDS_NSECS_IN_SEC + ts.tv_nsec;
}

inline void dds_sleepfor(dds_duration_t n) {
  if (n > 0) std::this_thread::sleep_for(std::chrono::nanoseconds(n));
}

// --- statuses and QoS policies (Cyclone DDS 0.10.2's numbering) -----------------------
enum dds_status_id_t {
  DDS_INCONSISTENT_TOPIC_STATUS_ID,
  DDS_OFFERED_DEADLINE_MISSED_STATUS_ID,
  DDS_REQUESTED_DEADLINE_MISSED_STATUS_ID,
  DDS_OFFERED_INCOMPATIBLE_QOS_STATUS_ID,
  DDS_REQUESTED_INCOMPATIBLE_QOS_STATUS_ID,
  DDS_SAMPLE_LOST_STATUS_ID,
  DDS_SAMPLE_REJECTED_STATUS_ID,
  DDS_DATA_ON_READERS_STATUS_ID,
  DDS_DATA_AVAILABLE_STATUS_ID,
  DDS_LIVELINESS_LOST_STATUS_ID,
  DDS_LIVELINESS_CHANGED_STATUS_ID,
  DDS_PUBLICATION_MATCHED_STATUS_ID,
  DDS_SUBSCRIPTION_MATCHED_STATUS_ID
};
#define DDS_INCONSISTENT_TOPIC_STATUS (1u << DDS_INCONSISTENT_TOPIC_STATUS_ID)
#define DDS_OFFERED_DEADLINE_MISSED_STATUS (1u << DDS_OFFERED_DEADLINE_MISSED_STATUS_ID)
#define DDS_REQUESTED_DEADLINE_MISSED_STATUS (1u << DDS_REQUESTED_DEADLINE_MISSED_STATUS_ID)
#define DDS_OFFERED_INCOMPATIBLE_QOS_STATUS (1u << DDS_OFFERED_INCOMPATIBLE_QOS_STATUS_ID)
#define DDS_REQUESTED_INCOMPATIBLE_QOS_STATUS (1u << DDS_REQUESTED_INCOMPATIBLE_QOS_STATUS_ID)
#define DDS_SAMPLE_LOST_STATUS (1u << DDS_SAMPLE_LOST_STATUS_ID)
#define DDS_SAMPLE_REJECTED_STATUS (1u << DDS_SAMPLE_REJECTED_STATUS_ID)
#define DDS_DATA_ON_READERS_STATUS (1u << DDS_DATA_ON_READERS_STATUS_ID)
#define DDS_DATA_AVAILABLE_STATUS (1u << DDS_DATA_AVAILABLE_STATUS_ID)
#define DDS_LIVELINESS_LOST_STATUS (1u << DDS_LIVELINESS_LOST_STATUS_ID)
#define DDS_LIVELINESS_CHANGED_STATUS (1u << DDS_LIVELINESS_CHANGED_STATUS_ID)
#define DDS_PUBLICATION_MATCHED_STATUS (1u << DDS_PUBLICATION_MATCHED_STATUS_ID)
#define DDS_SUBSCRIPTION_MATCHED_STATUS (1u << DDS_SUBSCRIPTION_MATCHED_STATUS_ID)

// The DCPS QosPolicyId of DURABILITY, the one policy the tests compare with.
#define DDS_DURABILITY_QOS_POLICY_ID 2

// --- environment and process ----------------------------------------------------------
inline dds_return_t ddsrt_setenv(const char* name, const char* value) {
  return setenv(name, value, 1) == 0 ? DDS_RETCODE_OK : DDS_RETCODE_ERROR;
}
inline dds_return_t ddsrt_unsetenv(const char* name) {
  return unsetenv(name) == 0 ? DDS_RETCODE_OK : DDS_RETCODE_ERROR;
}

using ddsrt_pid_t = int32_t;
using ddsrt_tid_t = uint64_t;
#define PRIdPID PRId32
#define PRIdTID PRIu64
inline ddsrt_pid_t ddsrt_getpid() {
  return static_cast<ddsrt_pid_t>(getpid());
}
inline ddsrt_tid_t ddsrt_gettid() {
  return static_cast<ddsrt_tid_t>(syscall(SYS_gettid));
}

// --- atomics --------------------------------------------------------------------------
struct ddsrt_atomic_uint32_t {
  std::atomic<uint32_t> v;
};
#define DDSRT_ATOMIC_UINT32_INIT(x) \
  { (x) }
#define DDSRT_ATOMIC_UINT64_INIT(x) \
  { (x) }
inline uint32_t ddsrt_atomic_inc32_nv(ddsrt_atomic_uint32_t* a) {
  return ++a->v;
}

// --- mutex and condition variable -----------------------------------------------------
struct ddsrt_mutex_t {
  std::mutex m;
};
struct ddsrt_cond_t {
  std::condition_variable c;
};
inline void ddsrt_mutex_init(ddsrt_mutex_t*) {}
inline void ddsrt_mutex_destroy(ddsrt_mutex_t*) {}
inline void ddsrt_mutex_lock(ddsrt_mutex_t* mx) {
  mx->m.lock();
}
inline void ddsrt_mutex_unlock(ddsrt_mutex_t* mx) {
  mx->m.unlock();
}
inline void ddsrt_cond_init(ddsrt_cond_t*) {}
inline void ddsrt_cond_destroy(ddsrt_cond_t*) {}
inline void ddsrt_cond_signal(ddsrt_cond_t* cv) {
  cv->c.notify_one();
}
inline void ddsrt_cond_broadcast(ddsrt_cond_t* cv) {
  cv->c.notify_all();
}
inline void ddsrt_cond_wait(ddsrt_cond_t* cv, ddsrt_mutex_t* mx) {
  std::unique_lock<std::mutex> lock(mx->m, std::adopt_lock);
  cv->c.wait(lock);
  lock.release();
}
// False when `reltime` passed without a wake-up (spurious wake-ups count as wake-ups, as
// there: every caller loops on its predicate).
inline bool ddsrt_cond_waitfor(ddsrt_cond_t* cv, ddsrt_mutex_t* mx, dds_duration_t reltime) {
  if (reltime == DDS_INFINITY) {
    ddsrt_cond_wait(cv, mx);
    return true;
  }
  std::unique_lock<std::mutex> lock(mx->m, std::adopt_lock);
  const auto status = cv->c.wait_for(lock, std::chrono::nanoseconds(reltime));
  lock.release();
  return status == std::cv_status::no_timeout;
}

// --- threads --------------------------------------------------------------------------
using ddsrt_thread_routine_t = uint32_t (*)(void*);
struct ddsrt_threadattr_t {
  int unused;
};
struct ddsrt_thread_t {
  std::thread* t;
  uint32_t* result;
};
inline void ddsrt_threadattr_init(ddsrt_threadattr_t* attr) {
  attr->unused = 0;
}
inline dds_return_t ddsrt_thread_create(ddsrt_thread_t* thread, const char* /*name*/,
                                        const ddsrt_threadattr_t* /*attr*/,
                                        ddsrt_thread_routine_t routine, void* arg) {
  thread->result = new uint32_t(0);
  uint32_t* result = thread->result;
  thread->t = new std::thread([routine, arg, result] { *result = routine(arg); });
  return DDS_RETCODE_OK;
}
inline dds_return_t ddsrt_thread_join(ddsrt_thread_t thread, uint32_t* thread_result) {
  thread.t->join();
  if (thread_result != nullptr) *thread_result = *thread.result;
  delete thread.t;
  delete thread.result;
  return DDS_RETCODE_OK;
}
