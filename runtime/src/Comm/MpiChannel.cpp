//===- MpiChannel.cpp - a Channel over an MPI communicator ----------------===//

#include "runtime/src/Comm/MpiChannel.h"

#include <chrono>
#include <sched.h>
#include <thread>

using namespace dtcrt;

MpiChannel::MpiChannel(MPI_Comm comm, std::vector<int> worldRanks,
                       double timeoutSeconds)
    : comm(comm), worldRanks(std::move(worldRanks)), timeout(timeoutSeconds) {
  MPI_Comm_rank(comm, &myRank);
}

MpiChannel::~MpiChannel() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized && comm != MPI_COMM_NULL && comm != MPI_COMM_WORLD)
    MPI_Comm_free(&comm);
}

bool MpiChannel::sendRecv(int to, const void *send, size_t sendBytes, int from,
                          void *recv, size_t recvBytes, const char *what,
                          std::string &error) {
  // MPI counts are ints: move at most 1 GiB per message.
  constexpr size_t kPiece = size_t(1) << 30;
  size_t sendDone = 0, recvDone = 0;
  do {
    size_t s = std::min(kPiece, sendBytes - sendDone);
    size_t r = std::min(kPiece, recvBytes - recvDone);
    MPI_Request requests[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
    if (r > 0)
      MPI_Irecv(static_cast<char *>(recv) + recvDone, int(r), MPI_BYTE, from, 0,
                comm, &requests[0]);
    if (s > 0)
      MPI_Isend(static_cast<const char *>(send) + sendDone, int(s), MPI_BYTE,
                to, 0, comm, &requests[1]);
    // Poll: MPI moves a large message in fragments only while both sides
    // call into it, so keep calling, yielding the core between calls (ranks
    // that share cores, mpirun --oversubscribe, then take turns); only a
    // peer silent for a second is waited for with sleeps (a slow or dead
    // rank), until the timeout.
    auto start = std::chrono::steady_clock::now();
    for (int spins = 0;; ++spins) {
      int done = 0;
      MPI_Testall(2, requests, &done, MPI_STATUSES_IGNORE);
      if (done)
        break;
      if (whileBlocked())
        whileBlocked()();
      if (spins < 64)
        continue;
      sched_yield();
      if (spins % 1024 != 0)
        continue;
      double waited = std::chrono::duration<double>(
                          std::chrono::steady_clock::now() - start)
                          .count();
      if (waited > 1)
        std::this_thread::sleep_for(std::chrono::microseconds(200));
      if (waited > timeout) {
        error = std::string(what) + ": no answer from rank " +
                std::to_string(worldRanks[size_t(r > 0 ? from : to)]) +
                " within " + std::to_string(int(timeout)) +
                " s (DTCRT_COMM_TIMEOUT_S); is it alive?";
        return false;
      }
    }
    sent += int64_t(s);
    sendDone += s;
    recvDone += r;
  } while (sendDone < sendBytes || recvDone < recvBytes);
  return true;
}

namespace {
/// An exchange's requests: pieces of at most 1 GiB each way.
struct MpiExchange final : Channel::Exchange {
  std::vector<MPI_Request> requests;
};
} // namespace

std::unique_ptr<Channel::Exchange>
MpiChannel::startExchange(int to, const void *send, size_t sendBytes, int from,
                          void *recv, size_t recvBytes, int tag,
                          std::string &error) {
  (void)error;
  constexpr size_t kPiece = size_t(1) << 30;
  auto x = std::make_unique<MpiExchange>();
  for (size_t done = 0; done < recvBytes; done += kPiece) {
    x->requests.push_back(MPI_REQUEST_NULL);
    MPI_Irecv(static_cast<char *>(recv) + done,
              int(std::min(kPiece, recvBytes - done)), MPI_BYTE, from, tag,
              comm, &x->requests.back());
  }
  for (size_t done = 0; done < sendBytes; done += kPiece) {
    x->requests.push_back(MPI_REQUEST_NULL);
    MPI_Isend(static_cast<const char *>(send) + done,
              int(std::min(kPiece, sendBytes - done)), MPI_BYTE, to, tag, comm,
              &x->requests.back());
  }
  sent += int64_t(sendBytes);
  return x;
}

bool MpiChannel::testExchange(Exchange &exchange) {
  auto &x = static_cast<MpiExchange &>(exchange);
  int done = 0;
  MPI_Testall(int(x.requests.size()), x.requests.data(), &done,
              MPI_STATUSES_IGNORE);
  return done != 0;
}

// Point-to-point messages use their own tags (1 + stream), so that they
// never match a collective's fragments (tag 0) on the same communicator.
static int pointToPointTag(int stream) { return 1 + stream; }

void MpiChannel::reapPosted() {
  for (Posted &p : posted)
    if (p.request != MPI_REQUEST_NULL) {
      int done = 0;
      MPI_Test(&p.request, &done, MPI_STATUS_IGNORE);
    }
  while (!posted.empty() && posted.front().request == MPI_REQUEST_NULL)
    posted.erase(posted.begin());
}

bool MpiChannel::post(int to, int stream, const void *data, size_t bytes,
                      std::string &error) {
  if (bytes > (size_t(1) << 31) - 1) {
    error = "a point-to-point message of " + std::to_string(bytes) +
            " bytes is larger than MPI's 2 GiB";
    return false;
  }
  reapPosted();
  posted.emplace_back();
  Posted &p = posted.back();
  p.data.assign(static_cast<const char *>(data),
                static_cast<const char *>(data) + bytes);
  p.to = to;
  MPI_Isend(p.data.data(), int(bytes), MPI_BYTE, to, pointToPointTag(stream),
            comm, &p.request);
  sent += int64_t(bytes);
  return true;
}

bool MpiChannel::waitFor(MPI_Request &request, int peer, const char *what,
                         bool reap, std::string &error) {
  auto start = std::chrono::steady_clock::now();
  for (int spins = 0;; ++spins) {
    int done = 0;
    MPI_Test(&request, &done, MPI_STATUS_IGNORE);
    if (done)
      return true;
    if (whileBlocked())
      whileBlocked()();
    if (reap && spins % 16 == 0)
      reapPosted();
    if (spins < 64)
      continue;
    sched_yield();
    if (spins % 1024 != 0)
      continue;
    double waited =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
            .count();
    if (waited > 1)
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    if (waited > timeout) {
      error = std::string(what) + ": no answer from rank " +
              std::to_string(worldRanks[size_t(peer)]) + " within " +
              std::to_string(int(timeout)) +
              " s (DTCRT_COMM_TIMEOUT_S); is it alive?";
      return false;
    }
  }
}

bool MpiChannel::receive(int from, int stream, void *data, size_t bytes,
                         const char *what, std::string &error) {
  if (bytes > (size_t(1) << 31) - 1) {
    error = "a point-to-point message of " + std::to_string(bytes) +
            " bytes is larger than MPI's 2 GiB";
    return false;
  }
  MPI_Request request = MPI_REQUEST_NULL;
  MPI_Irecv(data, int(bytes), MPI_BYTE, from, pointToPointTag(stream), comm,
            &request);
  return waitFor(request, from, what, /*reap=*/true, error);
}

bool MpiChannel::flush(std::string &error) {
  // Without reaping while it waits: reaping erases from `posted`, under the
  // loop's feet (a request tested after it was freed, now and then).
  for (Posted &p : posted)
    if (p.request != MPI_REQUEST_NULL &&
        !waitFor(p.request, p.to, "send", /*reap=*/false, error))
      return false;
  posted.clear();
  return true;
}
