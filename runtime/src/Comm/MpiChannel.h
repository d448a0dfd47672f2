//===- MpiChannel.h - a Channel over an MPI communicator ------------------===//

#ifndef DTCRT_COMM_MPICHANNEL_H
#define DTCRT_COMM_MPICHANNEL_H

#include "runtime/src/Comm/Channel.h"

#include <mpi.h>

#include <deque>
#include <vector>

namespace dtcrt {

/// Non-blocking sends and receives on `comm`, polled until they complete or
/// `timeoutSeconds` pass without progress; a timeout names the peer by its
/// world rank.
class MpiChannel final : public Channel {
public:
  MpiChannel(MPI_Comm comm, std::vector<int> worldRanks, double timeoutSeconds);
  ~MpiChannel() override;

  int rank() const override { return myRank; }
  int size() const override { return int(worldRanks.size()); }
  bool sendRecv(int to, const void *send, size_t sendBytes, int from,
                void *recv, size_t recvBytes, const char *what,
                std::string &error) override;
  bool post(int to, int stream, const void *data, size_t bytes,
            std::string &error) override;
  bool receive(int from, int stream, void *data, size_t bytes, const char *what,
               std::string &error) override;
  bool flush(std::string &error) override;
  std::unique_ptr<Exchange> startExchange(int to, const void *send,
                                          size_t sendBytes, int from,
                                          void *recv, size_t recvBytes, int tag,
                                          std::string &error) override;
  bool testExchange(Exchange &exchange) override;
  double timeoutSeconds() const override { return timeout; }
  int worldRank(int rank) const override { return worldRanks[size_t(rank)]; }

private:
  /// Polls `request` until it completes, or fails after `timeoutSeconds`
  /// naming `peer` (a group rank); with `reap`, also frees the posted sends
  /// that completed meanwhile (never while `request` is one of them).
  bool waitFor(MPI_Request &request, int peer, const char *what, bool reap,
               std::string &error);
  /// Frees the posted sends that completed.
  void reapPosted();

  /// A posted send: its copy of the data and its request.
  struct Posted {
    std::vector<char> data;
    MPI_Request request = MPI_REQUEST_NULL;
    int to = 0;
  };
  std::vector<Posted> posted;

  MPI_Comm comm;
  std::vector<int> worldRanks;
  int myRank = 0;
  double timeout;
};

} // namespace dtcrt

#endif // DTCRT_COMM_MPICHANNEL_H
