//===- StepComm.cpp - the collectives generated code calls ----------------===//

#include "dtcrt/dtcrt.h"

#include "runtime/src/Comm/Collectives.h"
#include "runtime/src/Comm/Mesh.h"
#include "runtime/src/Core/Report.h"

#include "runtime/src/Core/Timeline.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <functional>
#include <memory>
#include <sched.h>
#include <thread>
#include <vector>

using namespace dtcrt;

namespace {
DType typeOf(const char *dtype) {
  std::optional<DType> t = parseDType(dtype ? dtype : "");
  if (!t)
    fatalError(std::string("internal: a collective of unknown dtype '") +
               (dtype ? dtype : "") + "'");
  return *t;
}

Channel &channelOf(dtcrt_step_ctx *ctx, int axes) {
  static SelfChannel self;
  if (!ctx || !ctx->mesh)
    return self;
  return static_cast<Mesh *>(ctx->mesh)->group(axes);
}

[[noreturn]] void failed(dtcrt_step_ctx *ctx, const char *collective, int axes,
                         const std::string &why) {
  fatalError(std::string(collective) + " over " + axesName(axes) +
             runningStepSuffix(ctx) + " failed: " + why);
}
} // namespace

namespace {
/// Seconds ranks spent blocked in collectives, per axes mask: a
/// synchronous collective's whole time, an asynchronous one's wait.
double blockedSeconds[8];

double now() {
  return std::chrono::duration<double>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

/// Adds the time from `start` to now to the blocked time of `axes`.
struct BlockedTimer {
  int axes;
  double start = now();
  explicit BlockedTimer(int axes) : axes(axes) {}
  ~BlockedTimer() { blockedSeconds[axes & 7] += now() - start; }
};

/// An asynchronous collective of the step and what it is for.
struct InFlight {
  std::unique_ptr<PendingCollective> pending;
  const char *name = nullptr, *op = nullptr;
  int axes = 0;
  double traceBegin = 0;
  bool traced = false;
};
/// By slot; `order` holds the slots in flight, oldest first.
std::vector<InFlight> inFlight;
std::vector<int> order;
/// The next tag of each axes group: every rank of a group starts its
/// asynchronous collectives in the same order.
int nextTag[8];

/// Moves every collective in flight on; records those that completed.
void progressAll(dtcrt_step_ctx *ctx) {
  std::string error;
  for (int slot : order) {
    InFlight &f = inFlight[size_t(slot)];
    if (f.pending->done())
      continue;
    if (!f.pending->progress(error))
      failed(ctx, f.op, f.axes, error);
    if (f.pending->done() && f.traced)
      traceSpan(f.name, f.op, 3, f.traceBegin, traceClockMicros());
  }
}

/// The step context of the collectives in flight, for the blocked hook.
dtcrt_step_ctx *inFlightCtx = nullptr;

/// Channel::whileBlocked: a blocking wait moves the collectives in flight
/// on.
void progressWhileBlocked() {
  if (!order.empty())
    progressAll(inFlightCtx);
}

void startInFlight(dtcrt_step_ctx *ctx, int slot, int axes, const char *op,
                   const std::function<std::unique_ptr<PendingCollective>(
                       Channel &, int, std::string &)> &start) {
  if (slot < 0)
    fatalError("internal: an asynchronous collective without a slot");
  if (size_t(slot) >= inFlight.size())
    inFlight.resize(size_t(slot) + 1);
  InFlight &f = inFlight[size_t(slot)];
  if (f.pending)
    fatalError(std::string("internal: ") + op +
               " started again before its wait (slot " + std::to_string(slot) +
               ")");
  inFlightCtx = ctx;
  whileBlocked() = &progressWhileBlocked;
  Channel &c = channelOf(ctx, axes);
  int tag = Channel::kFirstAsyncTag + nextTag[axes & 7]++ % 16384;
  f.name = ctx && ctx->current_op ? ctx->current_op : op;
  f.op = op;
  f.axes = axes;
  f.traced = traceEnabled();
  f.traceBegin = f.traced ? traceClockMicros() : 0;
  std::string error;
  f.pending = start(c, tag, error);
  if (!f.pending)
    failed(ctx, op, axes, error);
  if (f.pending->done() && f.traced)
    traceSpan(f.name, f.op, 3, f.traceBegin, traceClockMicros());
  order.push_back(slot);
  if (ctx)
    ctx->comm_pending = int(order.size());
}
} // namespace

double dtcrt::commBlockedSeconds(int axes) { return blockedSeconds[axes & 7]; }

extern "C" void dtcrt_comm_all_reduce(dtcrt_step_ctx *ctx, int axes,
                                      const char *dtype, int kind,
                                      const void *in, void *out,
                                      int64_t count) {
  BlockedTimer timer(axes);
  std::string error;
  if (!allReduce(channelOf(ctx, axes), typeOf(dtype), ReduceOp(kind), in, out,
                 count, error))
    failed(ctx, "all_reduce", axes, error);
}

extern "C" void dtcrt_comm_all_reduce_start(dtcrt_step_ctx *ctx, int slot,
                                            int axes, const char *dtype,
                                            int kind, const void *in, void *out,
                                            int64_t count) {
  DType type = typeOf(dtype);
  startInFlight(ctx, slot, axes, "all_reduce",
                [&](Channel &c, int tag, std::string &error) {
                  return startAllReduce(c, type, ReduceOp(kind), in, out, count,
                                        tag, error);
                });
}

extern "C" void dtcrt_comm_reduce_scatter_start(dtcrt_step_ctx *ctx, int slot,
                                                int axes, const char *dtype,
                                                int kind, const void *in,
                                                void *out, int64_t outer,
                                                int64_t dim, int64_t inner) {
  DType type = typeOf(dtype);
  startInFlight(ctx, slot, axes, "reduce_scatter",
                [&](Channel &c, int tag, std::string &error) {
                  return startReduceScatter(c, type, ReduceOp(kind), in, out,
                                            outer, dim, inner, tag, error);
                });
}

extern "C" void dtcrt_comm_all_gather_start(dtcrt_step_ctx *ctx, int slot,
                                            int axes, const char *dtype,
                                            const void *in, void *out,
                                            int64_t outer, int64_t dim,
                                            int64_t inner) {
  DType type = typeOf(dtype);
  startInFlight(ctx, slot, axes, "all_gather",
                [&](Channel &c, int tag, std::string &error) {
                  return startAllGather(c, type, in, out, outer, dim, inner,
                                        tag, error);
                });
}

extern "C" void dtcrt_comm_progress(dtcrt_step_ctx *ctx) { progressAll(ctx); }

extern "C" void dtcrt_comm_wait(dtcrt_step_ctx *ctx, int slot) {
  if (slot < 0 || size_t(slot) >= inFlight.size() ||
      !inFlight[size_t(slot)].pending)
    fatalError("internal: a wait for a collective that was not started (slot " +
               std::to_string(slot) + ")");
  InFlight &f = inFlight[size_t(slot)];
  BlockedTimer timer(f.axes);
  // Poll as MpiChannel does: spin, then yield the core (ranks sharing
  // cores take turns), then sleep while a peer is silent, until the
  // timeout.
  Channel &c = channelOf(ctx, f.axes);
  double start = timer.start;
  for (int spins = 0; !f.pending->done(); ++spins) {
    progressAll(ctx);
    if (f.pending->done() || spins < 64)
      continue;
    sched_yield();
    if (spins % 1024 != 0)
      continue;
    double waited = now() - start;
    if (waited > 1)
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    if (waited > c.timeoutSeconds())
      failed(ctx, f.op, f.axes,
             std::string(f.op) + ": no answer from rank " +
                 std::to_string(c.worldRank(f.pending->waitingFor())) +
                 " within " + std::to_string(int(c.timeoutSeconds())) +
                 " s (DTCRT_COMM_TIMEOUT_S); is it alive?");
  }
  f.pending.reset();
  order.erase(std::find(order.begin(), order.end(), slot));
  if (ctx)
    ctx->comm_pending = int(order.size());
}

extern "C" void dtcrt_comm_reduce_scatter(dtcrt_step_ctx *ctx, int axes,
                                          const char *dtype, int kind,
                                          const void *in, void *out,
                                          int64_t outer, int64_t dim,
                                          int64_t inner) {
  BlockedTimer timer(axes);
  std::string error;
  if (!reduceScatter(channelOf(ctx, axes), typeOf(dtype), ReduceOp(kind), in,
                     out, outer, dim, inner, error))
    failed(ctx, "reduce_scatter", axes, error);
}

extern "C" void dtcrt_comm_all_gather(dtcrt_step_ctx *ctx, int axes,
                                      const char *dtype, const void *in,
                                      void *out, int64_t outer, int64_t dim,
                                      int64_t inner) {
  BlockedTimer timer(axes);
  std::string error;
  if (!allGather(channelOf(ctx, axes), typeOf(dtype), in, out, outer, dim,
                 inner, error))
    failed(ctx, "all_gather", axes, error);
}

extern "C" void dtcrt_comm_local_block(dtcrt_step_ctx *ctx, int axes,
                                       const char *dtype, const void *in,
                                       void *out, int64_t outer, int64_t dim,
                                       int64_t inner) {
  Channel &c = channelOf(ctx, axes);
  localBlock(c.rank(), c.size(), dtypeSize(typeOf(dtype)), in, out, outer, dim,
             inner);
}

/// The group rank `shift` steps from this rank along the one axis of
/// `axes`, cyclically.
static int peerOf(Channel &c, int shift) {
  int n = c.size();
  return ((c.rank() + shift) % n + n) % n;
}

extern "C" void dtcrt_comm_send(dtcrt_step_ctx *ctx, int axes, int shift,
                                const void *in, int64_t bytes) {
  Channel &c = channelOf(ctx, axes);
  std::string error;
  // Stream 0 goes up the axis (shift > 0), stream 1 down.
  if (!c.post(peerOf(c, shift), shift > 0 ? 0 : 1, in, size_t(bytes), error))
    failed(ctx, "send", axes, error);
}

extern "C" void dtcrt_comm_recv(dtcrt_step_ctx *ctx, int axes, int shift,
                                void *out, int64_t bytes) {
  Channel &c = channelOf(ctx, axes);
  std::string error;
  // The peer sent with the opposite shift.
  if (!c.receive(peerOf(c, shift), shift < 0 ? 0 : 1, out, size_t(bytes),
                 "recv", error))
    failed(ctx, "recv", axes, error);
}

extern "C" void dtcrt_comm_group(dtcrt_step_ctx *ctx, int axes, int *rank,
                                 int *size, double *timeoutS) {
  Channel &c = channelOf(ctx, axes);
  *rank = c.rank();
  *size = c.size();
  *timeoutS = c.timeoutSeconds();
}

extern "C" int dtcrt_comm_world_rank(dtcrt_step_ctx *ctx, int axes, int rank) {
  return channelOf(ctx, axes).worldRank(rank);
}

extern "C" void dtcrt_comm_broadcast(dtcrt_step_ctx *ctx, int axes, void *data,
                                     int64_t bytes) {
  std::string error;
  if (!channelOf(ctx, axes).broadcast(data, size_t(bytes), error))
    failed(ctx, "broadcast", axes, error);
}

extern "C" void dtcrt_comm_count(dtcrt_step_ctx *ctx, int axes,
                                 const char *name, const char *dtype,
                                 int64_t count) {
  Channel &c = channelOf(ctx, axes);
  size_t es = dtypeSize(typeOf(dtype));
  std::string collective = name ? name : "";
  if (collective == "all_reduce")
    c.countSent(allReduceBytesSent(count, es, c.size(), c.rank()));
  else if (collective == "reduce_scatter" || collective == "all_gather")
    c.countSent(allGatherBytesSent(count, es, c.size()));
  else
    fatalError("internal: bytes counted for an unknown collective '" +
               collective + "'");
}

extern "C" void dtcrt_comm_fail(dtcrt_step_ctx *ctx, int axes, const char *name,
                                const char *why) {
  failed(ctx, name ? name : "collective", axes, why ? why : "");
}
