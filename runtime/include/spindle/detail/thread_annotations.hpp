// Clang thread-safety annotations (STYLE 8) and the annotated mutex the DCPS layer locks
// with. Under clang with -Wthread-safety the analysis checks that every member marked
// SPINDLE_GUARDED_BY(mu) is touched only with `mu` held; under other compilers the macros
// expand to nothing and Mutex is a plain std::mutex.
//
// Not part of the DDS API: spindle::detail is for the runtime and its templates.
// Threading: Mutex is a mutex; MutexLock is a scoped lock owned by one thread.
#pragma once

#include <mutex>

#if defined(__clang__)
#define SPINDLE_THREAD_ANNOTATION(x) __attribute__((x))
#else
#define SPINDLE_THREAD_ANNOTATION(x)
#endif

#define SPINDLE_CAPABILITY(x) SPINDLE_THREAD_ANNOTATION(capability(x))
#define SPINDLE_SCOPED_CAPABILITY SPINDLE_THREAD_ANNOTATION(scoped_lockable)
#define SPINDLE_GUARDED_BY(x) SPINDLE_THREAD_ANNOTATION(guarded_by(x))
#define SPINDLE_PT_GUARDED_BY(x) SPINDLE_THREAD_ANNOTATION(pt_guarded_by(x))
#define SPINDLE_REQUIRES(...) SPINDLE_THREAD_ANNOTATION(requires_capability(__VA_ARGS__))
#define SPINDLE_ACQUIRE(...) SPINDLE_THREAD_ANNOTATION(acquire_capability(__VA_ARGS__))
#define SPINDLE_RELEASE(...) SPINDLE_THREAD_ANNOTATION(release_capability(__VA_ARGS__))
#define SPINDLE_EXCLUDES(...) SPINDLE_THREAD_ANNOTATION(locks_excluded(__VA_ARGS__))
#define SPINDLE_NO_THREAD_SAFETY_ANALYSIS SPINDLE_THREAD_ANNOTATION(no_thread_safety_analysis)

namespace spindle::detail {

// std::mutex with the capability attribute. It is BasicLockable, so
// std::condition_variable_any can wait on it directly.
class SPINDLE_CAPABILITY("mutex") Mutex {
 public:
  Mutex() = default;
  Mutex(const Mutex&) = delete;
  Mutex& operator=(const Mutex&) = delete;
  void lock() SPINDLE_ACQUIRE() { mu_.lock(); }
  void unlock() SPINDLE_RELEASE() { mu_.unlock(); }

 private:
  std::mutex mu_;
};

class SPINDLE_SCOPED_CAPABILITY MutexLock {
 public:
  explicit MutexLock(Mutex& mu) SPINDLE_ACQUIRE(mu) : mu_(&mu) { mu_->lock(); }
  ~MutexLock() SPINDLE_RELEASE() { mu_->unlock(); }
  MutexLock(const MutexLock&) = delete;
  MutexLock& operator=(const MutexLock&) = delete;

 private:
  Mutex* mu_;
};

}  // namespace spindle::detail
