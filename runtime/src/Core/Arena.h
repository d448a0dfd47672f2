//===- Arena.h - the step's memory arena and its guard mode ---------------===//
//
// One block of arena_bytes per rank holds every intermediate buffer of the
// step at offsets the memory planner chose. Generated code reports each
// buffer it writes (dtcrt_arena_note), so the runtime measures the
// high-water mark; in guard mode it poisons the bytes outside the live
// buffers before each kernel and checks them after.
//
//===----------------------------------------------------------------------===//

#ifndef DTCRT_CORE_ARENA_H
#define DTCRT_CORE_ARENA_H

#include "dtcrt/dtcrt.h"

#include <cstdint>
#include <string>

namespace dtcrt {

/// The poison byte guard mode writes at arena offset `offset` (it varies
/// with the offset, so a copy of poison to another place is caught too).
inline uint8_t guardPoison(int64_t offset) {
  return uint8_t(0xa5 ^ uint8_t((uint64_t(offset) * 0x9e3779b1u) >> 13));
}

/// Checks the live list of a guard call; false with a message naming the
/// bad entry. `n` pairs (offset, bytes) must lie inside the arena.
bool checkLiveList(const dtcrt_step_ctx *ctx, const int64_t *live, int n,
                   std::string &error);

/// The first arena offset outside every live buffer whose byte is not the
/// poison, or -1.
int64_t findGuardViolation(const dtcrt_step_ctx *ctx, const int64_t *live,
                           int n);

} // namespace dtcrt

#endif // DTCRT_CORE_ARENA_H
