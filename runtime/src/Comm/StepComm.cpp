//===- StepComm.cpp - the collectives generated code calls ----------------===//

#include "dtcrt/dtcrt.h"

#include "runtime/src/Comm/Collectives.h"
#include "runtime/src/Comm/Mesh.h"
#include "runtime/src/Core/Report.h"

#include <cstring>

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

extern "C" void dtcrt_comm_all_reduce(dtcrt_step_ctx *ctx, int axes,
                                      const char *dtype, int kind,
                                      const void *in, void *out,
                                      int64_t count) {
  std::string error;
  if (!allReduce(channelOf(ctx, axes), typeOf(dtype), ReduceOp(kind), in, out,
                 count, error))
    failed(ctx, "all_reduce", axes, error);
}

extern "C" void dtcrt_comm_reduce_scatter(dtcrt_step_ctx *ctx, int axes,
                                          const char *dtype, int kind,
                                          const void *in, void *out,
                                          int64_t outer, int64_t dim,
                                          int64_t inner) {
  std::string error;
  if (!reduceScatter(channelOf(ctx, axes), typeOf(dtype), ReduceOp(kind), in,
                     out, outer, dim, inner, error))
    failed(ctx, "reduce_scatter", axes, error);
}

extern "C" void dtcrt_comm_all_gather(dtcrt_step_ctx *ctx, int axes,
                                      const char *dtype, const void *in,
                                      void *out, int64_t outer, int64_t dim,
                                      int64_t inner) {
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
