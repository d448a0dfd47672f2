//===- Collectives.h - ring collectives over a Channel --------------------===//
//
// All-reduce, reduce-scatter and all-gather as ring algorithms (the
// conventions of nccl-tests and ../shared/REFERENCE.md): over n ranks an
// all-reduce sends 2(n-1)/n of the buffer, a reduce-scatter or all-gather
// (n-1)/n of the full buffer. Every rank ends with the same bits: each chunk
// is reduced once, along the ring, then copied.
//
// Blocks are in group order (group rank i holds block i). A tensor is
// viewed as [outer, dim, inner] around the dimension that is split, so a
// block is [outer, dim / n, inner]; for outer == 1 blocks are contiguous.
//
//===----------------------------------------------------------------------===//

#ifndef DTCRT_COMM_COLLECTIVES_H
#define DTCRT_COMM_COLLECTIVES_H

#include "runtime/src/Comm/Channel.h"
#include "runtime/src/Core/DType.h"

#include <cstdint>
#include <string>

namespace dtcrt {

enum class ReduceOp { Sum = 0, Max = 1, Min = 2, Mean = 3 };

/// The element counts of the n chunks an all-reduce of `count` elements is
/// cut into: count / n each, the first count % n one more.
int64_t ringChunk(int64_t count, int n, int i);

/// Bytes group rank `rank` sends in each collective (what the channel
/// counts; plan.json predicts the same).
int64_t allReduceBytesSent(int64_t count, size_t elementBytes, int n, int rank);
int64_t allGatherBytesSent(int64_t fullCount, size_t elementBytes, int n);

/// Reduces `count` elements of `in` over the group into `out` (which may be
/// `in`).
bool allReduce(Channel &channel, DType type, ReduceOp op, const void *in,
               void *out, int64_t count, std::string &error);

/// `in` is [outer, n * dim, inner]; `out` gets this rank's block
/// [outer, dim, inner] of the reduction over the group.
bool reduceScatter(Channel &channel, DType type, ReduceOp op, const void *in,
                   void *out, int64_t outer, int64_t dim, int64_t inner,
                   std::string &error);

/// `in` is this rank's block [outer, dim, inner]; `out` gets the group's
/// blocks [outer, n * dim, inner].
bool allGather(Channel &channel, DType type, const void *in, void *out,
               int64_t outer, int64_t dim, int64_t inner, std::string &error);

/// No communication: `out` gets this rank's block [outer, dim, inner] of
/// the whole tensor `in` [outer, n * dim, inner].
void localBlock(int rank, int n, size_t elementBytes, const void *in, void *out,
                int64_t outer, int64_t dim, int64_t inner);

} // namespace dtcrt

#endif // DTCRT_COMM_COLLECTIVES_H
