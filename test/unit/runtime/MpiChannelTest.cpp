//===- MpiChannelTest.cpp - posted sends over MPI, under mpirun ----------===//
//
// Runs under `mpirun -np N`, N even (test/runtime/mpi-channel.test): ranks
// 2k and 2k + 1 make a pair, the pairs side by side (more ranks than cores
// make the timing vary, as in the suite's pipeline runs). Each rank of a
// pair posts several sends larger than OpenMPI's eager limit to the other,
// so that they stay pending until the peer receives them, then flushes
// while the peer receives them one by one, slowly: the sends complete while
// flush waits for them, in the order they were posted or, over two streams,
// out of it. Each received message holds the pattern of its index, checked
// element by element. Prints "mpi-channel: rank R ok" on success; any
// failure is an error message and exit status 1.
//
//===----------------------------------------------------------------------===//

#include "runtime/src/Comm/MpiChannel.h"

#include <chrono>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

using namespace dtcrt;

namespace {

[[noreturn]] void fail(int rank, const std::string &what) {
  std::fprintf(stderr, "mpi-channel: rank %d: %s\n", rank, what.c_str());
  MPI_Abort(MPI_COMM_WORLD, 1);
  std::exit(1);
}

/// Element i of message m.
float pattern(int m, size_t i) { return float(m * 1000 + int(i % 997)); }

/// Message m's element count: 1 MiB, or mixed sizes around the eager
/// limit when `mixed`.
size_t elements(int m, bool mixed) {
  if (!mixed)
    return size_t(1) << 18;
  static const size_t sizes[] = {16, size_t(1) << 18, 1024, size_t(1) << 16,
                                 4,  size_t(1) << 17};
  return sizes[m % 6];
}

/// Posts message m to the peer on `stream`.
void postMessage(MpiChannel &c, int m, int stream, bool mixed) {
  std::vector<float> data(elements(m, mixed));
  for (size_t i = 0; i < data.size(); ++i)
    data[i] = pattern(m, i);
  std::string error;
  if (!c.post(1 - c.rank(), stream, data.data(), data.size() * 4, error))
    fail(c.worldRank(c.rank()), "post: " + error);
}

/// Receives message m from the peer on `stream` and checks its elements.
void receiveMessage(MpiChannel &c, int m, int stream, bool mixed) {
  std::vector<float> data(elements(m, mixed));
  std::string error;
  if (!c.receive(1 - c.rank(), stream, data.data(), data.size() * 4, "recv",
                 error))
    fail(c.worldRank(c.rank()), "receive: " + error);
  for (size_t i = 0; i < data.size(); ++i)
    if (data[i] != pattern(m, i))
      fail(c.worldRank(c.rank()), "message " + std::to_string(m) + " element " +
                                      std::to_string(i) + " is " +
                                      std::to_string(data[i]) + ", expected " +
                                      std::to_string(pattern(m, i)));
}

/// Flushes the posted sends.
void flush(MpiChannel &c) {
  std::string error;
  if (!c.flush(error))
    fail(c.worldRank(c.rank()), "flush: " + error);
}

/// `sender` posts `count` messages and flushes; the other rank receives
/// them, sleeping `pauseMs` before each. With `streams` 2, message m goes
/// on stream m % 2 and the receiver takes stream 1's messages first, so
/// that sends complete out of the order they were posted in.
void round(MpiChannel &c, int sender, int count, bool mixed, int pauseMs,
           int streams = 1) {
  if (c.rank() == sender) {
    for (int m = 0; m < count; ++m)
      postMessage(c, m, m % streams, mixed);
    flush(c);
    return;
  }
  for (int stream = streams - 1; stream >= 0; --stream)
    for (int m = stream; m < count; m += streams) {
      std::this_thread::sleep_for(std::chrono::milliseconds(pauseMs));
      receiveMessage(c, m, stream, mixed);
    }
}

/// `sender` posts messages 0, 1 and 2 on streams 0, 1 and 2, flushes, and
/// then tells the peer so (raw MPI, a tag of its own); the peer receives
/// 0, then 2, waits, and only then 1: it checks that flush had not returned
/// while message 1 was still pending.
void outOfOrderRound(MpiChannel &c, MPI_Comm pair, int sender) {
  constexpr int kFlushedTag = 32000;
  int peer = 1 - c.rank(), flushed = 1;
  if (c.rank() == sender) {
    for (int m = 0; m < 3; ++m)
      postMessage(c, m, m, /*mixed=*/false);
    flush(c);
    MPI_Send(&flushed, 1, MPI_INT, peer, kFlushedTag, pair);
    return;
  }
  receiveMessage(c, 0, 0, /*mixed=*/false);
  receiveMessage(c, 2, 2, /*mixed=*/false);
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  int early = 0;
  MPI_Iprobe(peer, kFlushedTag, pair, &early, MPI_STATUS_IGNORE);
  if (early)
    fail(c.worldRank(c.rank()),
         "the peer's flush returned while its message 1 was still "
         "pending");
  receiveMessage(c, 1, 1, /*mixed=*/false);
  MPI_Recv(&flushed, 1, MPI_INT, peer, kFlushedTag, pair, MPI_STATUS_IGNORE);
}

} // namespace

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int size = 0, rank = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (size % 2 != 0) {
    std::fprintf(stderr,
                 "mpi-channel: run under mpirun -np N, N even, not %d\n", size);
    MPI_Finalize();
    return 1;
  }
  {
    // Ranks 2k and 2k + 1 are a pair, side by side with the other pairs.
    MPI_Comm pair = MPI_COMM_NULL;
    MPI_Comm_split(MPI_COMM_WORLD, rank / 2, rank, &pair);
    MpiChannel c(pair, {rank / 2 * 2, rank / 2 * 2 + 1},
                 /*timeoutSeconds=*/60);
    for (int sender : {0, 1})
      outOfOrderRound(c, pair, sender);
    for (int repeat = 0; repeat < 10; ++repeat) {
      round(c, /*sender=*/0, /*count=*/6, /*mixed=*/false, /*pauseMs=*/5);
      round(c, /*sender=*/1, /*count=*/12, /*mixed=*/true, /*pauseMs=*/2);
      round(c, /*sender=*/0, /*count=*/7, /*mixed=*/false, /*pauseMs=*/3,
            /*streams=*/2);
      round(c, /*sender=*/1, /*count=*/12, /*mixed=*/true, /*pauseMs=*/1,
            /*streams=*/2);
    }
  }
  std::printf("mpi-channel: rank %d ok\n", rank);
  MPI_Finalize();
  return 0;
}
