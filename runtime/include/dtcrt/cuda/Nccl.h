//===- Nccl.h - the CUDA target's collectives: NCCL on a comm stream ------===//
//
// Generated CUDA code calls dtcg_comm_<name> where the CPU target calls the
// runtime's dtcrt_comm_<name> (same arguments, dtcrt.h): the operands are
// device memory, so the collectives run in NCCL rather than over the
// runtime's host channels. The runtime's Channel of the same mesh-axes
// group still serves the rest:
//
//  * One NCCL communicator per mesh-axes group, made at its first
//    collective: group rank 0 makes the ncclUniqueId and the runtime
//    broadcasts it over the group's MPI channel (dtcrt_comm_broadcast).
//  * Collectives run on a communication stream. The compute stream records
//    an event the communication stream waits for before each one; a
//    blocking collective makes the compute stream wait for it in turn, an
//    asynchronous one (*_start) records an event of its own that
//    dtcg_comm_wait makes the compute stream wait for. The host never
//    blocks; every collective of every group is issued in program order on
//    the one communication stream, as NCCL requires of the ranks.
//  * An asynchronous collective reads its operand "now" (dtcrt.h): its
//    operand is copied on the compute stream into memory the collective
//    owns (its result buffer or a scratch of its slot) before the compute
//    stream moves on.
//  * A block split off a middle dimension ([outer, n * dim, inner] with
//    outer > 1) is regrouped by 2-D copies into NCCL's rank-major layout.
//  * Bytes are counted through the runtime as its ring collectives count
//    them (dtcrt_comm_count), and failures end the run through it
//    (dtcrt_comm_fail), with the runtime's messages.
//  * dtcg::synchronize waits for the step without hanging on a dead peer:
//    it polls the compute stream and each communicator's asynchronous
//    error, and aborts the communicators after the runtime's timeout.
//
// Under DTCG_EMULATION the NCCL API is EmulatedNccl.h's.
//
//===----------------------------------------------------------------------===//

#ifndef DTCRT_CUDA_NCCL_H
#define DTCRT_CUDA_NCCL_H

#include "dtcrt/cuda/Device.h"
#include "dtcrt/dtcrt.h"

#ifdef DTCG_EMULATION
#include "dtcrt/cuda/EmulatedNccl.h"
#else
#include <nccl.h>
#endif

#include <chrono>
#include <string>
#include <thread>
#include <vector>

namespace dtcg::nccl {

/// The communicator of one mesh-axes group.
struct Group {
  int axes = 0, rank = 0, size = 1;
  double timeoutSeconds = 300;
  ncclComm_t comm = nullptr;
};

/// The groups whose communicator exists.
inline std::vector<Group *> &liveGroups() {
  static std::vector<Group *> groups;
  return groups;
}

/// Pinned host memory of at least `bytes` for pipeline transfers (reused:
/// the transfers of a step run one after another on the host).
inline void *hostStaging(size_t bytes) {
  static PinnedBuffer staging;
  return staging.reserve(bytes);
}

inline cudaStream_t commStream() {
  static cudaStream_t s = createStream("creating the communication stream");
  return s;
}

inline cudaEvent_t newEvent() {
  cudaEvent_t e = nullptr;
  check(cudaEventCreateWithFlags(&e, cudaEventDisableTiming),
        "creating an event");
  return e;
}

/// Makes `to` wait for what was issued on `from` so far.
inline void order(cudaStream_t from, cudaStream_t to) {
  static cudaEvent_t computeDone = newEvent(), commDone = newEvent();
  cudaEvent_t e = from == stream() ? computeDone : commDone;
  check(cudaEventRecord(e, from), "recording an event");
  check(cudaStreamWaitEvent(to, e, 0), "ordering the streams");
}

[[noreturn]] inline void fail(dtcrt_step_ctx *ctx, const Group &g,
                              const char *what, ncclResult_t r) {
  std::string why = std::string("NCCL: ") + ncclGetErrorString(r);
  const char *last = ncclGetLastError(g.comm);
  if (last && *last)
    why += " (" + std::string(last) + ")";
  dtcrt_comm_fail(ctx, g.axes, what, why.c_str());
  std::abort(); // dtcrt_comm_fail does not return
}

/// The group of `axes`, its communicator made on first use.
inline Group &group(dtcrt_step_ctx *ctx, int axes) {
  static Group groups[8];
  static bool made[8] = {};
  Group &g = groups[axes & 7];
  if (made[axes & 7])
    return g;
  made[axes & 7] = true;
  g.axes = axes;
  dtcrt_comm_group(ctx, axes, &g.rank, &g.size, &g.timeoutSeconds);
  if (g.size == 1)
    return g;
  ncclUniqueId id;
  std::memset(&id, 0, sizeof(id));
  if (g.rank == 0) {
    ncclResult_t r = ncclGetUniqueId(&id);
    if (r != ncclSuccess)
      fail(ctx, g, "making a communicator", r);
  }
  dtcrt_comm_broadcast(ctx, axes, &id, int64_t(sizeof(id)));
#ifdef DTCG_EMULATION
  dtcemu::nccl::timeoutSeconds() = g.timeoutSeconds;
#endif
  selectDevice();
  ncclResult_t r = ncclCommInitRank(&g.comm, g.size, id, g.rank);
  if (r != ncclSuccess)
    fail(ctx, g, "making a communicator", r);
#ifdef DTCG_EMULATION
  for (int k = 0; k < g.size; ++k)
    g.comm->worldRanks.push_back(dtcrt_comm_world_rank(ctx, axes, k));
#endif
  liveGroups().push_back(&g);
  return g;
}

inline ncclDataType_t typeOf(const char *dtype) {
  std::string d = dtype;
  if (d == "f32")
    return ncclFloat32;
  if (d == "bf16")
    return ncclBfloat16;
  if (d == "f16")
    return ncclFloat16;
  if (d == "f64")
    return ncclFloat64;
  if (d == "i64")
    return ncclInt64;
  if (d == "i32")
    return ncclInt32;
  if (d == "i8")
    return ncclInt8;
  if (d == "u8" || d == "bool")
    return ncclUint8;
  fatal("NCCL has no collectives on " + d + " tensors");
}

inline ncclRedOp_t opOf(int kind) {
  switch (kind) {
  case 0:
    return ncclSum;
  case 1:
    return ncclMax;
  case 2:
    return ncclMin;
  default:
    return ncclAvg;
  }
}

/// Device memory a collective owns between its start and its end: one
/// buffer per asynchronous slot, one (slot -1) for the blocking ones, which
/// end before the next one starts.
inline void *scratch(int slot, size_t bytes) {
  struct Buffer {
    void *data = nullptr;
    size_t bytes = 0;
  };
  static std::vector<Buffer> buffers;
  size_t i = size_t(slot + 1);
  if (buffers.size() <= i)
    buffers.resize(i + 1);
  Buffer &b = buffers[i];
  if (b.bytes < bytes) {
    if (b.data)
      check(cudaFree(b.data), "freeing a collective's scratch");
    check(cudaMalloc(&b.data, bytes), "allocating a collective's scratch");
    b.bytes = bytes;
  }
  return b.data;
}

/// The event that marks the end of asynchronous slot `slot`.
inline cudaEvent_t &slotEvent(int slot) {
  static std::vector<cudaEvent_t> events;
  if (events.size() <= size_t(slot))
    events.resize(size_t(slot) + 1, nullptr);
  if (!events[size_t(slot)])
    events[size_t(slot)] = newEvent();
  return events[size_t(slot)];
}

/// After a collective was issued on the communication stream: a blocking
/// one holds the compute stream until it ends; an asynchronous one marks
/// its end for dtcg_comm_wait.
inline void finish(int slot) {
  if (slot < 0)
    order(commStream(), stream());
  else
    check(cudaEventRecord(slotEvent(slot), commStream()),
          "recording a collective's end");
}

/// Copies rows: `rows` rows of `width` bytes from `src` (rows `srcPitch`
/// apart) to `dst` (rows `dstPitch` apart), on `s`.
inline void copyRows(void *dst, size_t dstPitch, const void *src,
                     size_t srcPitch, size_t width, size_t rows,
                     cudaStream_t s) {
  check(cudaMemcpy2DAsync(dst, dstPitch, src, srcPitch, width, rows,
                          cudaMemcpyDeviceToDevice, s),
        "regrouping a collective's blocks");
}

inline void allReduce(dtcrt_step_ctx *ctx, int slot, int axes,
                      const char *dtype, int kind, const void *in, void *out,
                      int64_t count) {
  Group &g = group(ctx, axes);
  size_t bytes = size_t(count) * size_t(dtypeBytes(dtype));
  // An asynchronous all-reduce runs in place in its result, which it owns.
  if (in != out && (g.size == 1 || slot >= 0))
    check(cudaMemcpyAsync(out, in, bytes, cudaMemcpyDeviceToDevice, stream()),
          "copying an all-reduce's operand");
  if (g.size == 1)
    return;
  const void *send = slot >= 0 ? out : in;
  order(stream(), commStream());
  ncclResult_t r = ncclAllReduce(send, out, size_t(count), typeOf(dtype),
                                 opOf(kind), g.comm, commStream());
  if (r != ncclSuccess)
    fail(ctx, g, "all_reduce", r);
  dtcrt_comm_count(ctx, axes, "all_reduce", dtype, count);
  finish(slot);
}

inline void reduceScatter(dtcrt_step_ctx *ctx, int slot, int axes,
                          const char *dtype, int kind, const void *in,
                          void *out, int64_t outer, int64_t dim,
                          int64_t inner) {
  Group &g = group(ctx, axes);
  size_t es = size_t(dtypeBytes(dtype)), n = size_t(g.size);
  size_t block = size_t(outer * dim * inner), row = size_t(dim * inner) * es;
  if (g.size == 1) {
    check(cudaMemcpyAsync(out, in, block * es, cudaMemcpyDeviceToDevice,
                          stream()),
          "copying a reduce-scatter's operand");
    return;
  }
  const void *send = in;
  if (outer != 1 || slot >= 0) {
    // Rank-major [n, outer, dim, inner], owned by the collective.
    auto *work = static_cast<uint8_t *>(scratch(slot, n * block * es));
    if (outer == 1)
      check(cudaMemcpyAsync(work, in, n * block * es, cudaMemcpyDeviceToDevice,
                            stream()),
            "copying a reduce-scatter's operand");
    else
      for (size_t r = 0; r < n; ++r)
        copyRows(work + r * block * es, row,
                 static_cast<const uint8_t *>(in) + r * row, n * row, row,
                 size_t(outer), stream());
    send = work;
  }
  order(stream(), commStream());
  ncclResult_t r = ncclReduceScatter(send, out, block, typeOf(dtype),
                                     opOf(kind), g.comm, commStream());
  if (r != ncclSuccess)
    fail(ctx, g, "reduce_scatter", r);
  dtcrt_comm_count(ctx, axes, "reduce_scatter", dtype, int64_t(n * block));
  finish(slot);
}

inline void allGather(dtcrt_step_ctx *ctx, int slot, int axes,
                      const char *dtype, const void *in, void *out,
                      int64_t outer, int64_t dim, int64_t inner) {
  Group &g = group(ctx, axes);
  size_t es = size_t(dtypeBytes(dtype)), n = size_t(g.size);
  size_t block = size_t(outer * dim * inner), row = size_t(dim * inner) * es;
  if (g.size == 1) {
    check(cudaMemcpyAsync(out, in, block * es, cudaMemcpyDeviceToDevice,
                          stream()),
          "copying an all-gather's operand");
    return;
  }
  // NCCL gathers rank-major: into `out` itself when blocks are contiguous,
  // else into scratch, regrouped into `out` afterwards.
  auto *gathered = outer == 1
                       ? static_cast<uint8_t *>(out)
                       : static_cast<uint8_t *>(scratch(slot, n * block * es));
  const void *send = in;
  if (outer != 1 || slot >= 0) {
    uint8_t *mine = gathered + size_t(g.rank) * block * es;
    check(cudaMemcpyAsync(mine, in, block * es, cudaMemcpyDeviceToDevice,
                          stream()),
          "copying an all-gather's operand");
    send = mine;
  }
  order(stream(), commStream());
  ncclResult_t r =
      ncclAllGather(send, gathered, block, typeOf(dtype), g.comm, commStream());
  if (r != ncclSuccess)
    fail(ctx, g, "all_gather", r);
  if (outer != 1)
    for (size_t k = 0; k < n; ++k)
      copyRows(static_cast<uint8_t *>(out) + k * row, n * row,
               gathered + k * block * es, row, row, size_t(outer),
               commStream());
  dtcrt_comm_count(ctx, axes, "all_gather", dtype, int64_t(n * block));
  finish(slot);
}

/// Aborts every communicator (a peer is dead or failed) and ends the run.
[[noreturn]] inline void abortAll(dtcrt_step_ctx *ctx, const Group &g,
                                  const std::string &why) {
  for (Group *live : liveGroups())
    ncclCommAbort(live->comm);
  dtcrt_comm_fail(ctx, g.axes, "a collective", why.c_str());
  std::abort();
}

} // namespace dtcg::nccl

namespace dtcg {

/// Waits until the compute stream (and so every collective it waits for)
/// is done; with communicators, polls so that a failed or silent peer ends
/// the run after the runtime's timeout instead of hanging it.
inline void synchronize(dtcrt_step_ctx *ctx, const char *what) {
  if (nccl::liveGroups().empty()) {
    check(cudaStreamSynchronize(stream()), what);
    return;
  }
  auto start = std::chrono::steady_clock::now();
  for (int polls = 0;; ++polls) {
    cudaError_t status = cudaStreamQuery(stream());
    if (status == cudaSuccess)
      return;
    if (status != cudaErrorNotReady)
      check(status, what);
    for (nccl::Group *g : nccl::liveGroups()) {
      ncclResult_t async = ncclSuccess;
      ncclCommGetAsyncError(g->comm, &async);
      if (async != ncclSuccess && async != ncclInProgress)
        nccl::abortAll(ctx, *g,
                       std::string("NCCL: ") + ncclGetErrorString(async));
    }
    double waited =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
            .count();
    const nccl::Group &first = *nccl::liveGroups().front();
    if (waited > first.timeoutSeconds)
      nccl::abortAll(ctx, first,
                     "the step did not end within " +
                         std::to_string(int(first.timeoutSeconds)) +
                         " s (DTCRT_COMM_TIMEOUT_S): a peer's collective "
                         "never came; is every rank alive?");
    if (polls > 1000)
      std::this_thread::sleep_for(std::chrono::microseconds(50));
  }
}

} // namespace dtcg

// The collectives of generated code (dtcrt_comm_*'s arguments).
inline void dtcg_comm_all_reduce(dtcrt_step_ctx *ctx, int axes,
                                 const char *dtype, int kind, const void *in,
                                 void *out, int64_t count) {
  dtcg::nccl::allReduce(ctx, -1, axes, dtype, kind, in, out, count);
}
inline void dtcg_comm_all_reduce_start(dtcrt_step_ctx *ctx, int slot, int axes,
                                       const char *dtype, int kind,
                                       const void *in, void *out,
                                       int64_t count) {
  dtcg::nccl::allReduce(ctx, slot, axes, dtype, kind, in, out, count);
}
inline void dtcg_comm_reduce_scatter(dtcrt_step_ctx *ctx, int axes,
                                     const char *dtype, int kind,
                                     const void *in, void *out, int64_t outer,
                                     int64_t dim, int64_t inner) {
  dtcg::nccl::reduceScatter(ctx, -1, axes, dtype, kind, in, out, outer, dim,
                            inner);
}
inline void dtcg_comm_reduce_scatter_start(dtcrt_step_ctx *ctx, int slot,
                                           int axes, const char *dtype,
                                           int kind, const void *in, void *out,
                                           int64_t outer, int64_t dim,
                                           int64_t inner) {
  dtcg::nccl::reduceScatter(ctx, slot, axes, dtype, kind, in, out, outer, dim,
                            inner);
}
inline void dtcg_comm_all_gather(dtcrt_step_ctx *ctx, int axes,
                                 const char *dtype, const void *in, void *out,
                                 int64_t outer, int64_t dim, int64_t inner) {
  dtcg::nccl::allGather(ctx, -1, axes, dtype, in, out, outer, dim, inner);
}
inline void dtcg_comm_all_gather_start(dtcrt_step_ctx *ctx, int slot, int axes,
                                       const char *dtype, const void *in,
                                       void *out, int64_t outer, int64_t dim,
                                       int64_t inner) {
  dtcg::nccl::allGather(ctx, slot, axes, dtype, in, out, outer, dim, inner);
}
inline void dtcg_comm_wait(dtcrt_step_ctx *, int slot) {
  dtcg::check(
      cudaStreamWaitEvent(dtcg::stream(), dtcg::nccl::slotEvent(slot), 0),
      "waiting for a collective");
}
/// A pipeline transfer (dist.send/recv between stages): through pinned host
/// memory and the CPU runtime's channel of the axis (MPI), which copies what
/// it sends, so one staging buffer serves every transfer. NCCL's own
/// point-to-point calls would skip the host; this path is the one that the
/// host emulation checks.
inline void dtcg_comm_send(dtcrt_step_ctx *ctx, int axes, int shift,
                           const void *in, int64_t bytes) {
  void *host = dtcg::nccl::hostStaging(size_t(bytes));
  dtcg::check(cudaMemcpyAsync(host, in, size_t(bytes), cudaMemcpyDeviceToHost,
                              dtcg::stream()),
              "copying a pipeline transfer to the host");
  dtcg::check(cudaStreamSynchronize(dtcg::stream()),
              "copying a pipeline transfer to the host");
  dtcrt_comm_send(ctx, axes, shift, host, bytes);
}
inline void dtcg_comm_recv(dtcrt_step_ctx *ctx, int axes, int shift, void *out,
                           int64_t bytes) {
  void *host = dtcg::nccl::hostStaging(size_t(bytes));
  dtcrt_comm_recv(ctx, axes, shift, host, bytes);
  dtcg::check(cudaMemcpyAsync(out, host, size_t(bytes), cudaMemcpyHostToDevice,
                              dtcg::stream()),
              "copying a pipeline transfer to the device");
  dtcg::check(cudaStreamSynchronize(dtcg::stream()),
              "copying a pipeline transfer to the device");
}

/// No communication: this rank's block of a whole tensor, by 2-D copy.
inline void dtcg_comm_local_block(dtcrt_step_ctx *ctx, int axes,
                                  const char *dtype, const void *in, void *out,
                                  int64_t outer, int64_t dim, int64_t inner) {
  int rank = 0, size = 1;
  double timeout = 0;
  dtcrt_comm_group(ctx, axes, &rank, &size, &timeout);
  size_t row = size_t(dim * inner) * size_t(dtcg::dtypeBytes(dtype));
  dtcg::nccl::copyRows(out, row,
                       static_cast<const uint8_t *>(in) + size_t(rank) * row,
                       size_t(size) * row, row, size_t(outer), dtcg::stream());
}

#endif // DTCRT_CUDA_NCCL_H
