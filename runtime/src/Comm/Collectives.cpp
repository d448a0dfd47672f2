//===- Collectives.cpp - ring collectives over a Channel ------------------===//

#include "runtime/src/Comm/Collectives.h"

#include <algorithm>
#include <cstring>
#include <vector>

using namespace dtcrt;

int64_t dtcrt::ringChunk(int64_t count, int n, int i) {
  return count / n + (i < count % n ? 1 : 0);
}

static int64_t ringOffset(int64_t count, int n, int i) {
  return int64_t(i) * (count / n) + std::min<int64_t>(i, count % n);
}

static int mod(int a, int n) { return ((a % n) + n) % n; }

int64_t dtcrt::allReduceBytesSent(int64_t count, size_t elementBytes, int n,
                                  int rank) {
  if (n <= 1)
    return 0;
  // Reduce-scatter sends every chunk but its own; all-gather every chunk
  // but the one after its own.
  int64_t elements = 2 * count - ringChunk(count, n, rank) -
                     ringChunk(count, n, (rank + 1) % n);
  return elements * int64_t(elementBytes);
}

int64_t dtcrt::allGatherBytesSent(int64_t fullCount, size_t elementBytes,
                                  int n) {
  if (n <= 1)
    return 0;
  return fullCount / n * (n - 1) * int64_t(elementBytes);
}

namespace {
template <typename T> T combine(T a, T b, ReduceOp op) {
  switch (op) {
  case ReduceOp::Max:
    return a > b ? a : b;
  case ReduceOp::Min:
    return a < b ? a : b;
  default:
    return a + b;
  }
}

/// acc[i] = acc[i] (op) in[i].
void reduceInto(DType type, ReduceOp op, void *acc, const void *in,
                int64_t count) {
  switch (type) {
  case DType::F32: {
    auto *a = static_cast<float *>(acc);
    auto *b = static_cast<const float *>(in);
    if (op == ReduceOp::Sum || op == ReduceOp::Mean)
      for (int64_t i = 0; i < count; ++i)
        a[i] += b[i];
    else
      for (int64_t i = 0; i < count; ++i)
        a[i] = combine(a[i], b[i], op);
    return;
  }
  case DType::F64: {
    auto *a = static_cast<double *>(acc);
    auto *b = static_cast<const double *>(in);
    for (int64_t i = 0; i < count; ++i)
      a[i] = combine(a[i], b[i], op);
    return;
  }
  case DType::I64: {
    auto *a = static_cast<int64_t *>(acc);
    auto *b = static_cast<const int64_t *>(in);
    for (int64_t i = 0; i < count; ++i)
      a[i] = combine(a[i], b[i], op);
    return;
  }
  default:
    // 16-bit floats and other integers: through double, rounded once per
    // step of the ring as a 16-bit all-reduce rounds.
    for (int64_t i = 0; i < count; ++i)
      storeFromDouble(
          type, acc, i,
          combine(loadAsDouble(type, acc, i), loadAsDouble(type, in, i), op));
  }
}

void scale(DType type, void *data, int64_t count, double factor) {
  for (int64_t i = 0; i < count; ++i)
    storeFromDouble(type, data, i, loadAsDouble(type, data, i) * factor);
}

/// Reduce-scatter of a contiguous buffer cut into ring chunks: on return
/// group rank r's chunk r of `data` holds the reduction.
bool ringReduceScatter(Channel &c, DType type, ReduceOp op, uint8_t *data,
                       int64_t count, const char *what, std::string &error) {
  int n = c.size(), r = c.rank();
  size_t es = dtypeSize(type);
  std::vector<uint8_t> scratch(size_t(ringChunk(count, n, 0)) * es);
  for (int s = 0; s < n - 1; ++s) {
    int sendChunk = mod(r - s - 1, n), recvChunk = mod(r - s - 2, n);
    int64_t recvCount = ringChunk(count, n, recvChunk);
    if (!c.sendRecv((r + 1) % n, data + ringOffset(count, n, sendChunk) * es,
                    size_t(ringChunk(count, n, sendChunk)) * es, mod(r - 1, n),
                    scratch.data(), size_t(recvCount) * es, what, error))
      return false;
    reduceInto(type, op, data + ringOffset(count, n, recvChunk) * es,
               scratch.data(), recvCount);
  }
  return true;
}

/// All-gather of ring chunks: group rank r contributes chunk r of `data`.
bool ringAllGather(Channel &c, size_t es, uint8_t *data, int64_t count,
                   const char *what, std::string &error) {
  int n = c.size(), r = c.rank();
  for (int s = 0; s < n - 1; ++s) {
    int sendChunk = mod(r - s, n), recvChunk = mod(r - s - 1, n);
    if (!c.sendRecv((r + 1) % n, data + ringOffset(count, n, sendChunk) * es,
                    size_t(ringChunk(count, n, sendChunk)) * es, mod(r - 1, n),
                    data + ringOffset(count, n, recvChunk) * es,
                    size_t(ringChunk(count, n, recvChunk)) * es, what, error))
      return false;
  }
  return true;
}

/// [outer, n, block] <-> [n, outer, block] (block = dim * inner elements).
void regroup(const uint8_t *in, uint8_t *out, int64_t outer, int n,
             int64_t blockBytes, bool toGroupMajor) {
  for (int64_t o = 0; o < outer; ++o)
    for (int g = 0; g < n; ++g) {
      const uint8_t *src = toGroupMajor ? in + (o * n + g) * blockBytes
                                        : in + (g * outer + o) * blockBytes;
      uint8_t *dst = toGroupMajor ? out + (g * outer + o) * blockBytes
                                  : out + (o * n + g) * blockBytes;
      std::memcpy(dst, src, size_t(blockBytes));
    }
}
} // namespace

bool dtcrt::allReduce(Channel &c, DType type, ReduceOp op, const void *in,
                      void *out, int64_t count, std::string &error) {
  size_t es = dtypeSize(type);
  if (in != out)
    std::memmove(out, in, size_t(count) * es);
  int n = c.size();
  if (n > 1) {
    auto *data = static_cast<uint8_t *>(out);
    if (!ringReduceScatter(c, type, op, data, count, "all_reduce", error) ||
        !ringAllGather(c, es, data, count, "all_reduce", error))
      return false;
  }
  if (op == ReduceOp::Mean && n > 1)
    scale(type, out, count, 1.0 / n);
  return true;
}

bool dtcrt::reduceScatter(Channel &c, DType type, ReduceOp op, const void *in,
                          void *out, int64_t outer, int64_t dim, int64_t inner,
                          std::string &error) {
  int n = c.size(), r = c.rank();
  size_t es = dtypeSize(type);
  int64_t block = outer * dim * inner;
  std::vector<uint8_t> work(size_t(block * n) * es);
  if (outer == 1)
    std::memcpy(work.data(), in, work.size());
  else
    regroup(static_cast<const uint8_t *>(in), work.data(), outer, n,
            dim * inner * int64_t(es), /*toGroupMajor=*/true);
  if (n > 1 && !ringReduceScatter(c, type, op, work.data(), block * n,
                                  "reduce_scatter", error))
    return false;
  std::memcpy(out, work.data() + size_t(block * r) * es, size_t(block) * es);
  if (op == ReduceOp::Mean && n > 1)
    scale(type, out, block, 1.0 / n);
  return true;
}

bool dtcrt::allGather(Channel &c, DType type, const void *in, void *out,
                      int64_t outer, int64_t dim, int64_t inner,
                      std::string &error) {
  int n = c.size(), r = c.rank();
  size_t es = dtypeSize(type);
  int64_t block = outer * dim * inner;
  std::vector<uint8_t> work;
  uint8_t *dst = static_cast<uint8_t *>(out);
  if (outer != 1) {
    work.resize(size_t(block * n) * es);
    dst = work.data();
  }
  std::memmove(dst + size_t(block * r) * es, in, size_t(block) * es);
  if (n > 1 && !ringAllGather(c, es, dst, block * n, "all_gather", error))
    return false;
  if (outer != 1)
    regroup(work.data(), static_cast<uint8_t *>(out), outer, n,
            dim * inner * int64_t(es), /*toGroupMajor=*/false);
  return true;
}

void dtcrt::localBlock(int rank, int n, size_t es, const void *in, void *out,
                       int64_t outer, int64_t dim, int64_t inner) {
  int64_t row = dim * inner * int64_t(es);
  const auto *src = static_cast<const uint8_t *>(in);
  auto *dst = static_cast<uint8_t *>(out);
  for (int64_t o = 0; o < outer; ++o)
    std::memmove(dst + o * row, src + (o * n + rank) * row, size_t(row));
}

//===----------------------------------------------------------------------===//
// Asynchronous collectives
//===----------------------------------------------------------------------===//

bool PendingCollective::progress(std::string &error) {
  while (!finished) {
    if (current) {
      if (!channel.testExchange(*current))
        return true;
      current.reset();
      if (steps[next].after)
        steps[next].after();
      ++next;
    }
    if (next == steps.size()) {
      if (finish)
        finish();
      finished = true;
      break;
    }
    const Step &s = steps[next];
    current = channel.startExchange(s.to, s.send, s.sendBytes, s.from, s.recv,
                                    s.recvBytes, tag, error);
    if (!current)
      return false;
  }
  return true;
}

int PendingCollective::waitingFor() const {
  return next < steps.size() ? steps[next].from : channel.rank();
}

namespace {
/// Appends the ring reduce-scatter of `data` (ringReduceScatter's steps).
void addReduceScatterSteps(PendingCollective &p, Channel &c, DType type,
                           ReduceOp op, uint8_t *data, int64_t count) {
  int n = c.size(), r = c.rank();
  size_t es = dtypeSize(type);
  p.scratch.resize(size_t(ringChunk(count, n, 0)) * es);
  for (int s = 0; s < n - 1; ++s) {
    int sendChunk = mod(r - s - 1, n), recvChunk = mod(r - s - 2, n);
    int64_t recvCount = ringChunk(count, n, recvChunk);
    uint8_t *acc = data + ringOffset(count, n, recvChunk) * es;
    uint8_t *scratch = p.scratch.data();
    p.steps.push_back({(r + 1) % n, mod(r - 1, n),
                       data + ringOffset(count, n, sendChunk) * es,
                       size_t(ringChunk(count, n, sendChunk)) * es, scratch,
                       size_t(recvCount) * es,
                       [=] { reduceInto(type, op, acc, scratch, recvCount); }});
  }
}

/// Appends the ring all-gather of `data` (ringAllGather's steps).
void addAllGatherSteps(PendingCollective &p, Channel &c, size_t es,
                       uint8_t *data, int64_t count) {
  int n = c.size(), r = c.rank();
  for (int s = 0; s < n - 1; ++s) {
    int sendChunk = mod(r - s, n), recvChunk = mod(r - s - 1, n);
    p.steps.push_back({(r + 1) % n, mod(r - 1, n),
                       data + ringOffset(count, n, sendChunk) * es,
                       size_t(ringChunk(count, n, sendChunk)) * es,
                       data + ringOffset(count, n, recvChunk) * es,
                       size_t(ringChunk(count, n, recvChunk)) * es, nullptr});
  }
}

std::unique_ptr<PendingCollective> started(std::unique_ptr<PendingCollective> p,
                                           std::string &error) {
  if (!p->progress(error))
    return nullptr;
  return p;
}
} // namespace

std::unique_ptr<PendingCollective>
dtcrt::startAllReduce(Channel &c, DType type, ReduceOp op, const void *in,
                      void *out, int64_t count, int tag, std::string &error) {
  size_t es = dtypeSize(type);
  if (in != out)
    std::memmove(out, in, size_t(count) * es);
  auto p = std::make_unique<PendingCollective>(c, tag);
  int n = c.size();
  auto *data = static_cast<uint8_t *>(out);
  if (n > 1) {
    addReduceScatterSteps(*p, c, type, op, data, count);
    addAllGatherSteps(*p, c, es, data, count);
  }
  if (op == ReduceOp::Mean && n > 1)
    p->finish = [=] { scale(type, data, count, 1.0 / n); };
  return started(std::move(p), error);
}

std::unique_ptr<PendingCollective>
dtcrt::startReduceScatter(Channel &c, DType type, ReduceOp op, const void *in,
                          void *out, int64_t outer, int64_t dim, int64_t inner,
                          int tag, std::string &error) {
  int n = c.size(), r = c.rank();
  size_t es = dtypeSize(type);
  int64_t block = outer * dim * inner;
  auto p = std::make_unique<PendingCollective>(c, tag);
  p->work.resize(size_t(block * n) * es);
  if (outer == 1)
    std::memcpy(p->work.data(), in, p->work.size());
  else
    regroup(static_cast<const uint8_t *>(in), p->work.data(), outer, n,
            dim * inner * int64_t(es), /*toGroupMajor=*/true);
  uint8_t *work = p->work.data();
  if (n > 1)
    addReduceScatterSteps(*p, c, type, op, work, block * n);
  p->finish = [=] {
    std::memcpy(out, work + size_t(block * r) * es, size_t(block) * es);
    if (op == ReduceOp::Mean && n > 1)
      scale(type, out, block, 1.0 / n);
  };
  return started(std::move(p), error);
}

std::unique_ptr<PendingCollective>
dtcrt::startAllGather(Channel &c, DType type, const void *in, void *out,
                      int64_t outer, int64_t dim, int64_t inner, int tag,
                      std::string &error) {
  int n = c.size(), r = c.rank();
  size_t es = dtypeSize(type);
  int64_t block = outer * dim * inner;
  auto p = std::make_unique<PendingCollective>(c, tag);
  uint8_t *dst = static_cast<uint8_t *>(out);
  if (outer != 1) {
    p->work.resize(size_t(block * n) * es);
    dst = p->work.data();
  }
  std::memmove(dst + size_t(block * r) * es, in, size_t(block) * es);
  if (n > 1)
    addAllGatherSteps(*p, c, es, dst, block * n);
  if (outer != 1)
    p->finish = [=] {
      regroup(dst, static_cast<uint8_t *>(out), outer, n,
              dim * inner * int64_t(es), /*toGroupMajor=*/false);
    };
  return started(std::move(p), error);
}
