//===- LoopbackChannel.h - ranks as threads of one process ----------------===//
//
// For unit tests of the collectives: n threads, each with its own channel of
// a LoopbackHub, exchange messages through in-process mailboxes and count
// their bytes as the MPI channel does.
//
//===----------------------------------------------------------------------===//

#ifndef DTCRT_COMM_LOOPBACKCHANNEL_H
#define DTCRT_COMM_LOOPBACKCHANNEL_H

#include "runtime/src/Comm/Channel.h"

#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <vector>

namespace dtcrt {

class LoopbackHub {
public:
  explicit LoopbackHub(int size, double timeoutSeconds = 10);
  /// The channel of group rank `rank` (one per thread).
  std::unique_ptr<Channel> channel(int rank);

private:
  friend class LoopbackChannel;
  struct Message {
    int from;
    std::vector<unsigned char> bytes;
  };
  struct Mailbox {
    std::mutex mutex;
    std::condition_variable ready;
    std::deque<Message> messages;
  };
  int numRanks;
  double timeoutSeconds;
  std::vector<Mailbox> mailboxes;
};

} // namespace dtcrt

#endif // DTCRT_COMM_LOOPBACKCHANNEL_H
