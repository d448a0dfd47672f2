//===- EmulatedNccl.h - the NCCL API subset on the host, over shared memory
//===//
//
// Under --cuda-emulation the ranks of a run are processes on one host and
// "device" memory is host memory, so the NCCL calls of Nccl.h map to
// collectives over a POSIX shared-memory segment per communicator, as
// NCCL's own shared-memory transport moves data between the processes of
// one node:
//
//  * ncclGetUniqueId names a new segment; the caller's rank 0 broadcasts
//    the id over MPI (Nccl.h) and ncclCommInitRank maps the segment and
//    waits until every rank of the communicator has joined.
//  * A collective moves at most kSlotBytes per rank at a time: each rank
//    writes its part of the chunk into its slot, the ranks meet at a
//    barrier, each reads what it needs of every slot, and they meet again
//    before the slots are reused.
//  * Reductions combine the ranks' values in rank order, in double, rounded
//    to the element type after each step (a ring all-reduce rounds once per
//    hop; the CPU runtime's ring does the same), so every rank ends with the
//    same bits; ncclAvg divides the sum by the rank count.
//  * A rank that does not reach a barrier within timeoutSeconds() makes the
//    call return ncclRemoteError, ncclGetLastError naming that rank (by
//    the launcher's rank, which Nccl.h gives each communicator).
//
// Calls are synchronous (the emulated streams run everything in order).
//
//===----------------------------------------------------------------------===//

#ifndef DTCRT_CUDA_EMULATEDNCCL_H
#define DTCRT_CUDA_EMULATEDNCCL_H

#include "dtcrt/kernels/Common.h"

#include <atomic>
#include <chrono>
#include <climits>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <linux/futex.h>
#include <sched.h>
#include <string>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <thread>
#include <unistd.h>
#include <vector>

typedef struct {
  char internal[128];
} ncclUniqueId;
typedef enum {
  ncclSuccess = 0,
  ncclUnhandledCudaError = 1,
  ncclSystemError = 2,
  ncclInternalError = 3,
  ncclInvalidArgument = 4,
  ncclInvalidUsage = 5,
  ncclRemoteError = 6,
  ncclInProgress = 7
} ncclResult_t;
typedef enum {
  ncclInt8 = 0,
  ncclUint8 = 1,
  ncclInt32 = 2,
  ncclUint32 = 3,
  ncclInt64 = 4,
  ncclUint64 = 5,
  ncclFloat16 = 6,
  ncclFloat32 = 7,
  ncclFloat64 = 8,
  ncclBfloat16 = 9
} ncclDataType_t;
typedef enum {
  ncclSum = 0,
  ncclProd = 1,
  ncclMax = 2,
  ncclMin = 3,
  ncclAvg = 4
} ncclRedOp_t;

namespace dtcemu::nccl {

constexpr int kMaxRanks = 256;
constexpr size_t kSlotBytes = size_t(1) << 20;

/// The start of the segment: how many ranks joined, how many arrivals at
/// barriers there were (a futex word: waiters sleep on it), and how many
/// barriers each rank has reached (to name the one missing).
struct Header {
  std::atomic<int64_t> joined;
  std::atomic<uint32_t> arrivals;
  std::atomic<int64_t> arrived[kMaxRanks];
};
constexpr size_t kHeaderBytes = (sizeof(Header) + 4095) / 4096 * 4096;

/// Seconds a rank waits at a barrier for the others (Nccl.h sets the
/// runtime's DTCRT_COMM_TIMEOUT_S).
inline double &timeoutSeconds() {
  static double seconds = 300;
  return seconds;
}

struct Comm {
  int rank = 0, size = 1;
  Header *header = nullptr;
  uint8_t *slots = nullptr;
  size_t mapped = 0;
  int64_t generation = 0;
  std::string lastError;
  /// The launcher's rank of each rank (for messages; Nccl.h fills it).
  std::vector<int> worldRanks;

  uint8_t *slot(int r) const { return slots + size_t(r) * kSlotBytes; }
};

inline double secondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
      .count();
}

/// Waits until `ready()` holds: spin, then yield the core (ranks share
/// cores under --oversubscribe), then sleep while a peer is silent. False
/// after timeoutSeconds().
template <typename Ready> bool waitUntil(Ready ready) {
  auto start = std::chrono::steady_clock::now();
  for (int spins = 0; !ready(); ++spins) {
    if (spins < 64)
      continue;
    sched_yield();
    if (spins % 1024 != 0)
      continue;
    double waited = secondsSince(start);
    if (waited > 1)
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    if (waited > timeoutSeconds())
      return false;
  }
  return true;
}

/// Every rank of `c` reaches this point; false (lastError set) if one does
/// not in time. Waiters sleep on a futex (ranks outnumber cores under
/// mpirun --oversubscribe: a spinning rank would slow the one it waits
/// for); the last to arrive wakes them.
inline bool barrier(Comm &c, const char *what) {
  int64_t g = ++c.generation;
  c.header->arrived[c.rank].store(g, std::memory_order_release);
  // Arrivals count up by one per rank per barrier; this barrier is complete
  // once they reach g * size (modulo 2^32).
  uint32_t target = uint32_t(g) * uint32_t(c.size);
  uint32_t now = c.header->arrivals.fetch_add(1) + 1;
  auto *word = reinterpret_cast<uint32_t *>(&c.header->arrivals);
  if (now == target) {
    syscall(SYS_futex, word, FUTEX_WAKE, INT32_MAX, nullptr, nullptr, 0);
    return true;
  }
  auto start = std::chrono::steady_clock::now();
  for (int spins = 0;; ++spins) {
    now = c.header->arrivals.load(std::memory_order_acquire);
    if (int32_t(now - target) >= 0)
      return true;
    if (spins < 64)
      continue;
    timespec slice = {0, 50 * 1000 * 1000};
    syscall(SYS_futex, word, FUTEX_WAIT, now, &slice, nullptr, 0);
    if (secondsSince(start) > timeoutSeconds())
      break;
  }
  int missing = -1;
  for (int r = 0; r < c.size && missing < 0; ++r)
    if (c.header->arrived[r].load(std::memory_order_acquire) < g)
      missing = r;
  int named = size_t(missing) < c.worldRanks.size()
                  ? c.worldRanks[size_t(missing)]
                  : missing;
  c.lastError = std::string(what) + ": no answer from rank " +
                std::to_string(named) + " within " +
                std::to_string(int(timeoutSeconds())) +
                " s (DTCRT_COMM_TIMEOUT_S); is it alive?";
  return false;
}

inline size_t typeBytes(ncclDataType_t t) {
  switch (t) {
  case ncclInt8:
  case ncclUint8:
    return 1;
  case ncclFloat16:
  case ncclBfloat16:
    return 2;
  case ncclInt32:
  case ncclUint32:
  case ncclFloat32:
    return 4;
  default:
    return 8;
  }
}

template <typename T> double load(const uint8_t *p, size_t i) {
  T v;
  std::memcpy(&v, p + i * sizeof(T), sizeof(T));
  return double(v);
}
template <typename T> void store(uint8_t *p, size_t i, double v) {
  T t = T(v);
  if constexpr (std::is_same_v<T, dtck::bf16> || std::is_same_v<T, dtck::f16>)
    t = T(float(v));
  std::memcpy(p + i * sizeof(T), &t, sizeof(T));
}
template <typename T> double rounded(double v) {
  uint8_t bytes[sizeof(T)];
  store<T>(bytes, 0, v);
  return load<T>(bytes, 0);
}

/// out[i] = the reduction over ranks (in rank order) of part(r)[i].
template <typename T, typename Part>
void reduceTyped(ncclRedOp_t op, int n, Part part, uint8_t *out, size_t count) {
  for (size_t i = 0; i < count; ++i) {
    double acc = load<T>(part(0), i);
    for (int r = 1; r < n; ++r) {
      double v = load<T>(part(r), i);
      switch (op) {
      case ncclMax:
        acc = v > acc ? v : acc;
        break;
      case ncclMin:
        acc = v < acc ? v : acc;
        break;
      case ncclProd:
        acc = rounded<T>(acc * v);
        break;
      default:
        acc = rounded<T>(acc + v);
      }
    }
    if (op == ncclAvg)
      acc = acc * (1.0 / n);
    store<T>(out, i, acc);
  }
}

template <typename Part>
void reduce(ncclDataType_t t, ncclRedOp_t op, int n, Part part, uint8_t *out,
            size_t count) {
  switch (t) {
  case ncclInt8:
    return reduceTyped<int8_t>(op, n, part, out, count);
  case ncclUint8:
    return reduceTyped<uint8_t>(op, n, part, out, count);
  case ncclInt32:
    return reduceTyped<int32_t>(op, n, part, out, count);
  case ncclUint32:
    return reduceTyped<uint32_t>(op, n, part, out, count);
  case ncclInt64:
    return reduceTyped<int64_t>(op, n, part, out, count);
  case ncclUint64:
    return reduceTyped<uint64_t>(op, n, part, out, count);
  case ncclFloat16:
    return reduceTyped<dtck::f16>(op, n, part, out, count);
  case ncclBfloat16:
    return reduceTyped<dtck::bf16>(op, n, part, out, count);
  case ncclFloat32:
    return reduceTyped<float>(op, n, part, out, count);
  case ncclFloat64:
    return reduceTyped<double>(op, n, part, out, count);
  }
}

/// Runs a collective `what` over `count` elements `step` at a time: for
/// each chunk [at, at + m), `write` fills this rank's slot, the ranks meet,
/// `read` takes what it needs of every slot, and they meet again before
/// the slots are reused.
template <typename Write, typename Read>
bool inChunks(Comm &c, const char *what, size_t count, size_t step, Write write,
              Read read) {
  for (size_t at = 0; at < count; at += step) {
    size_t m = std::min(step, count - at);
    write(at, m);
    if (!barrier(c, what))
      return false;
    read(at, m);
    if (!barrier(c, what))
      return false;
  }
  return true;
}

} // namespace dtcemu::nccl

typedef dtcemu::nccl::Comm *ncclComm_t;

inline ncclResult_t ncclGetUniqueId(ncclUniqueId *id) {
  static int counter = 0;
  std::memset(id, 0, sizeof(*id));
  long long nanos = std::chrono::duration_cast<std::chrono::nanoseconds>(
                        std::chrono::steady_clock::now().time_since_epoch())
                        .count();
  std::snprintf(id->internal, sizeof(id->internal), "/dtcemu-nccl-%d-%lld-%d",
                int(getpid()), nanos, counter++);
  return ncclSuccess;
}

inline ncclResult_t ncclCommInitRank(ncclComm_t *comm, int nranks,
                                     ncclUniqueId id, int rank) {
  using namespace dtcemu::nccl;
  if (nranks < 1 || nranks > kMaxRanks || rank < 0 || rank >= nranks)
    return ncclInvalidArgument;
  size_t bytes = kHeaderBytes + size_t(nranks) * kSlotBytes;
  int fd = shm_open(id.internal, O_CREAT | O_RDWR, 0600);
  if (fd < 0)
    return ncclSystemError;
  if (ftruncate(fd, off_t(bytes)) != 0) {
    close(fd);
    return ncclSystemError;
  }
  void *p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  close(fd);
  if (p == MAP_FAILED)
    return ncclSystemError;
  auto *c = new Comm;
  c->rank = rank;
  c->size = nranks;
  c->header = static_cast<Header *>(p);
  c->slots = static_cast<uint8_t *>(p) + kHeaderBytes;
  c->mapped = bytes;
  // The last rank to join removes the name (the mappings stay).
  if (c->header->joined.fetch_add(1) == nranks - 1)
    shm_unlink(id.internal);
  if (!waitUntil([&] { return c->header->joined.load() >= nranks; })) {
    shm_unlink(id.internal);
    munmap(p, bytes);
    delete c;
    return ncclRemoteError;
  }
  *comm = c;
  return ncclSuccess;
}

inline ncclResult_t ncclAllReduce(const void *send, void *recv, size_t count,
                                  ncclDataType_t type, ncclRedOp_t op,
                                  ncclComm_t c, cudaStream_t) {
  using namespace dtcemu::nccl;
  size_t es = typeBytes(type), step = kSlotBytes / es;
  auto *in = static_cast<const uint8_t *>(send);
  auto *out = static_cast<uint8_t *>(recv);
  bool ok = inChunks(
      *c, "all_reduce", count, step,
      [&](size_t at, size_t m) {
        std::memcpy(c->slot(c->rank), in + at * es, m * es);
      },
      [&](size_t at, size_t m) {
        reduce(
            type, op, c->size, [&](int r) { return c->slot(r); }, out + at * es,
            m);
      });
  return ok ? ncclSuccess : ncclRemoteError;
}

/// `send` holds size * recvcount elements; `recv` gets this rank's block of
/// their reduction.
inline ncclResult_t ncclReduceScatter(const void *send, void *recv,
                                      size_t recvcount, ncclDataType_t type,
                                      ncclRedOp_t op, ncclComm_t c,
                                      cudaStream_t) {
  using namespace dtcemu::nccl;
  size_t es = typeBytes(type), n = size_t(c->size);
  size_t step = kSlotBytes / es / n;
  auto *in = static_cast<const uint8_t *>(send);
  auto *out = static_cast<uint8_t *>(recv);
  bool ok = inChunks(
      *c, "reduce_scatter", recvcount, step,
      [&](size_t at, size_t m) {
        for (size_t g = 0; g < n; ++g)
          std::memcpy(c->slot(c->rank) + g * m * es,
                      in + (g * recvcount + at) * es, m * es);
      },
      [&](size_t at, size_t m) {
        reduce(
            type, op, c->size,
            [&](int r) { return c->slot(r) + size_t(c->rank) * m * es; },
            out + at * es, m);
      });
  return ok ? ncclSuccess : ncclRemoteError;
}

/// `send` holds sendcount elements; `recv` gets every rank's, in rank order
/// (`send` may be this rank's place in `recv`).
inline ncclResult_t ncclAllGather(const void *send, void *recv,
                                  size_t sendcount, ncclDataType_t type,
                                  ncclComm_t c, cudaStream_t) {
  using namespace dtcemu::nccl;
  size_t es = typeBytes(type), step = kSlotBytes / es;
  auto *in = static_cast<const uint8_t *>(send);
  auto *out = static_cast<uint8_t *>(recv);
  bool ok = inChunks(
      *c, "all_gather", sendcount, step,
      [&](size_t at, size_t m) {
        std::memcpy(c->slot(c->rank), in + at * es, m * es);
      },
      [&](size_t at, size_t m) {
        for (int r = 0; r < c->size; ++r)
          std::memcpy(out + (size_t(r) * sendcount + at) * es, c->slot(r),
                      m * es);
      });
  return ok ? ncclSuccess : ncclRemoteError;
}

inline ncclResult_t ncclCommGetAsyncError(ncclComm_t, ncclResult_t *result) {
  *result = ncclSuccess;
  return ncclSuccess;
}
inline const char *ncclGetLastError(ncclComm_t c) {
  return c ? c->lastError.c_str() : "";
}
inline ncclResult_t ncclCommAbort(ncclComm_t c) {
  if (c) {
    munmap(c->header, c->mapped);
    delete c;
  }
  return ncclSuccess;
}
inline ncclResult_t ncclCommDestroy(ncclComm_t c) { return ncclCommAbort(c); }
inline const char *ncclGetErrorString(ncclResult_t r) {
  switch (r) {
  case ncclSuccess:
    return "no error";
  case ncclSystemError:
    return "unhandled system error (shared memory)";
  case ncclInvalidArgument:
    return "invalid argument";
  case ncclRemoteError:
    return "remote process exited or there was a network error";
  default:
    return "internal error";
  }
}

#endif // DTCRT_CUDA_EMULATEDNCCL_H
