// cpu_relax(): the spin-wait hint for polling loops (x86 PAUSE, Arm YIELD). It lets a
// sibling hyperthread run and keeps a spinning core from flooding the memory system with
// speculative loads of the line it waits on.
#pragma once

namespace spindle::core {

inline void cpu_relax() noexcept {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield" ::: "memory");
#endif
}

}  // namespace spindle::core
