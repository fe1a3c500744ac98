//===- AllocCounter.h - count heap allocations in a test binary -*- C++ -*-===//
//
// Replaces the global operator new/delete of the binary that includes it
// (include it in exactly one translation unit) with versions that count
// allocations, so that a test or benchmark can show that the binder's hit
// path allocates nothing. The shared runtime library's own calls to
// operator new resolve to these replacements too (ELF interposition), so
// its allocations are counted as well.
//
//===----------------------------------------------------------------------===//

#ifndef KJIT_UNITTESTS_RUNTIME_ALLOCCOUNTER_H
#define KJIT_UNITTESTS_RUNTIME_ALLOCCOUNTER_H

#include <atomic>
#include <cstdlib>
#include <new>

namespace kjit::rt::testing {

/// Allocations through operator new since the process started.
inline std::atomic<long> allocationCount{0};

} // namespace kjit::rt::testing

// GCC pairs the inlined replacement delete (free) with the new-expression at
// each call site and warns; the pairing is right, both sides are replaced.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
// One test binary includes this header, from one file: the replacements are
// its definitions.
// NOLINTBEGIN(misc-definitions-in-headers)

void *operator new(std::size_t size) {
  kjit::rt::testing::allocationCount.fetch_add(1, std::memory_order_relaxed);
  if (void *p = std::malloc(size ? size : 1))
    return p;
  throw std::bad_alloc();
}
void *operator new[](std::size_t size) { return operator new(size); }
void *operator new(std::size_t size, const std::nothrow_t &) noexcept {
  kjit::rt::testing::allocationCount.fetch_add(1, std::memory_order_relaxed);
  return std::malloc(size ? size : 1);
}
void *operator new[](std::size_t size, const std::nothrow_t &t) noexcept {
  return operator new(size, t);
}
void operator delete(void *p) noexcept { std::free(p); }
void operator delete[](void *p) noexcept { std::free(p); }
void operator delete(void *p, std::size_t) noexcept { std::free(p); }
void operator delete[](void *p, std::size_t) noexcept { std::free(p); }

// NOLINTEND(misc-definitions-in-headers)
#pragma GCC diagnostic pop

#endif // KJIT_UNITTESTS_RUNTIME_ALLOCCOUNTER_H
