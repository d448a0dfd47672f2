//===- Arena.cpp - the step's memory arena and its guard mode -------------===//

#include "runtime/src/Core/Arena.h"

#include "runtime/src/Core/Report.h"

#include <algorithm>
#include <utility>
#include <vector>

using namespace dtcrt;

bool dtcrt::checkLiveList(const dtcrt_step_ctx *ctx, const int64_t *live, int n,
                          std::string &error) {
  if (n < 0 || (n > 0 && !live)) {
    error = "guard: malformed list of live buffers";
    return false;
  }
  for (int i = 0; i < n; ++i) {
    int64_t offset = live[2 * i], bytes = live[2 * i + 1];
    if (offset < 0 || bytes < 0 || offset > ctx->arena_bytes ||
        bytes > ctx->arena_bytes - offset) {
      error = "guard: live buffer [" + std::to_string(offset) + ", +" +
              std::to_string(bytes) + ") lies outside the arena of " +
              std::to_string(ctx->arena_bytes) + " bytes";
      return false;
    }
  }
  return true;
}

/// The gaps between the live buffers: sorted, merged [begin, end) ranges of
/// [0, arena_bytes) that no live buffer covers.
static std::vector<std::pair<int64_t, int64_t>>
deadRanges(const dtcrt_step_ctx *ctx, const int64_t *live, int n) {
  std::vector<std::pair<int64_t, int64_t>> spans;
  for (int i = 0; i < n; ++i)
    if (live[2 * i + 1] > 0)
      spans.push_back({live[2 * i], live[2 * i] + live[2 * i + 1]});
  std::sort(spans.begin(), spans.end());
  std::vector<std::pair<int64_t, int64_t>> gaps;
  int64_t cursor = 0;
  for (const auto &s : spans) {
    if (s.first > cursor)
      gaps.push_back({cursor, s.first});
    cursor = std::max(cursor, s.second);
  }
  if (cursor < ctx->arena_bytes)
    gaps.push_back({cursor, ctx->arena_bytes});
  return gaps;
}

int64_t dtcrt::findGuardViolation(const dtcrt_step_ctx *ctx,
                                  const int64_t *live, int n) {
  for (const auto &gap : deadRanges(ctx, live, n))
    for (int64_t o = gap.first; o < gap.second; ++o)
      if (ctx->arena[o] != guardPoison(o))
        return o;
  return -1;
}

/// The live buffer nearest below `offset`, described for a message.
static std::string nearestBuffer(const int64_t *live, int n, int64_t offset) {
  int best = -1;
  for (int i = 0; i < n; ++i)
    if (live[2 * i] + live[2 * i + 1] <= offset &&
        (best < 0 ||
         live[2 * i] + live[2 * i + 1] > live[2 * best] + live[2 * best + 1]))
      best = i;
  if (best < 0)
    return "";
  int64_t end = live[2 * best] + live[2 * best + 1];
  return "; it lies " + std::to_string(offset - end) +
         " bytes past the end of the live buffer [" +
         std::to_string(live[2 * best]) + ", " + std::to_string(end) + ")";
}

extern "C" void dtcrt_arena_note(dtcrt_step_ctx *ctx, int64_t offset,
                                 int64_t bytes) {
  if (offset < 0 || bytes < 0 || offset > ctx->arena_bytes ||
      bytes > ctx->arena_bytes - offset)
    fatalError("arena overflow" + runningStepSuffix(ctx) + ": buffer [" +
               std::to_string(offset) + ", +" + std::to_string(bytes) +
               ") does not fit the arena of " +
               std::to_string(ctx->arena_bytes) + " bytes");
  ctx->high_water = std::max(ctx->high_water, offset + bytes);
}

extern "C" void dtcrt_guard_fill(dtcrt_step_ctx *ctx, const int64_t *live,
                                 int n) {
  std::string error;
  if (!checkLiveList(ctx, live, n, error))
    fatalError(error + runningStepSuffix(ctx));
  for (const auto &gap : deadRanges(ctx, live, n))
    for (int64_t o = gap.first; o < gap.second; ++o)
      ctx->arena[o] = guardPoison(o);
}

extern "C" void dtcrt_guard_check(dtcrt_step_ctx *ctx, const int64_t *live,
                                  int n, const char *op) {
  std::string error;
  if (!checkLiveList(ctx, live, n, error))
    fatalError(error + runningStepSuffix(ctx));
  int64_t bad = findGuardViolation(ctx, live, n);
  if (bad < 0)
    return;
  const char *saved = ctx->current_op;
  if (op && *op)
    ctx->current_op = op;
  std::string where = runningStepSuffix(ctx);
  ctx->current_op = saved;
  fatalError("guard: arena byte " + std::to_string(bad) +
             ", outside every live buffer, changed" + where +
             nearestBuffer(live, n, bad));
}
