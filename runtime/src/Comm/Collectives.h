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
#include <functional>
#include <memory>
#include <string>
#include <vector>

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

/// A collective in flight: the same ring as the blocking one, run one
/// exchange at a time by progress(), which never blocks. The operand was
/// copied when it started; the result is in `out` once done().
class PendingCollective {
public:
  /// One exchange of the ring and what follows it (a reduction of what
  /// came in).
  struct Step {
    int to, from;
    const uint8_t *send;
    size_t sendBytes;
    uint8_t *recv;
    size_t recvBytes;
    std::function<void()> after;
  };
  PendingCollective(Channel &channel, int tag) : channel(channel), tag(tag) {}

  /// Moves on as far as the transfers that completed allow; false with
  /// `error` set when an exchange cannot start.
  bool progress(std::string &error);
  bool done() const { return finished; }
  /// The group rank the collective waits for now (for a timeout's message).
  int waitingFor() const;

  std::vector<Step> steps;
  std::function<void()> finish;
  /// Buffers the steps use: a copy of the operand, a reduction's scratch.
  std::vector<uint8_t> work, scratch;

private:
  Channel &channel;
  int tag;
  size_t next = 0;
  std::unique_ptr<Channel::Exchange> current;
  bool finished = false;
};

/// The asynchronous collectives: as allReduce, reduceScatter and allGather,
/// started (the operand is read now) and moved on by progress(). `tag`
/// must be the same on every rank of the group for the same collective.
std::unique_ptr<PendingCollective> startAllReduce(Channel &channel, DType type,
                                                  ReduceOp op, const void *in,
                                                  void *out, int64_t count,
                                                  int tag, std::string &error);
std::unique_ptr<PendingCollective>
startReduceScatter(Channel &channel, DType type, ReduceOp op, const void *in,
                   void *out, int64_t outer, int64_t dim, int64_t inner,
                   int tag, std::string &error);
std::unique_ptr<PendingCollective> startAllGather(Channel &channel, DType type,
                                                  const void *in, void *out,
                                                  int64_t outer, int64_t dim,
                                                  int64_t inner, int tag,
                                                  std::string &error);

/// Seconds this process spent blocked in the collectives of the group of
/// `axes` (a mesh-axes mask) so far: a synchronous collective's whole time,
/// an asynchronous one's dtcrt_comm_wait.
double commBlockedSeconds(int axes);

/// No communication: `out` gets this rank's block [outer, dim, inner] of
/// the whole tensor `in` [outer, n * dim, inner].
void localBlock(int rank, int n, size_t elementBytes, const void *in, void *out,
                int64_t outer, int64_t dim, int64_t inner);

} // namespace dtcrt

#endif // DTCRT_COMM_COLLECTIVES_H
