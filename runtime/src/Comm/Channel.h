//===- Channel.h - point-to-point transport of one rank group -------------===//
//
// A Channel moves bytes between the ranks of one group (the ranks that
// differ only in some mesh axes). The collectives (Collectives.h) are ring
// algorithms written once over this interface, so every transport counts
// the bytes it really sends the same way: the MPI channel of a run under
// mpirun, and an in-process loopback channel for unit tests. The CUDA
// target's NCCL channel (runtime/include/dtcrt/cuda/Nccl.h) runs its own
// collectives on device memory and uses the group's Channel for the rest:
// its bootstrap (broadcast), its byte counts (countSent) and its failures.
//
//===----------------------------------------------------------------------===//

#ifndef DTCRT_COMM_CHANNEL_H
#define DTCRT_COMM_CHANNEL_H

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace dtcrt {

/// Called by a channel while it waits for a peer (a blocking collective, a
/// pipeline's receive): the asynchronous collectives in flight move on
/// meanwhile, so that a peer waiting for one of them is never stuck behind
/// this rank's blocking wait. Null: nothing to do.
inline void (*&whileBlocked())() {
  static void (*hook)() = nullptr;
  return hook;
}

class Channel {
public:
  virtual ~Channel() = default;

  /// This rank's position in the group, and the group's size.
  virtual int rank() const = 0;
  virtual int size() const = 0;

  /// Sends `sendBytes` from `send` to group rank `to` while receiving
  /// `recvBytes` into `recv` from group rank `from` (either side may be
  /// empty). Returns false with `error` set when the transfer fails or a
  /// peer does not answer within the channel's timeout; `what` names the
  /// collective for that message.
  virtual bool sendRecv(int to, const void *send, size_t sendBytes, int from,
                        void *recv, size_t recvBytes, const char *what,
                        std::string &error) = 0;

  /// Point-to-point transfers of a pipeline (dist.send / dist.recv): `post`
  /// copies `bytes` from `data` and sends them to group rank `to` without
  /// waiting for the peer (a buffered send, so that two stages sending to
  /// each other never deadlock); `receive` waits for the next message from
  /// group rank `from` (messages between two ranks arrive in the order they
  /// were posted, per `stream`: messages of different streams between the
  /// same two ranks, such as a pipeline's activations going down and its
  /// gradients coming back when both peers are one rank, never match each
  /// other); `flush` waits until every posted message was taken.
  virtual bool post(int to, int stream, const void *data, size_t bytes,
                    std::string &error) {
    (void)to, (void)stream, (void)data, (void)bytes;
    error = "this channel has no point-to-point transfers";
    return false;
  }
  virtual bool receive(int from, int stream, void *data, size_t bytes,
                       const char *what, std::string &error) {
    (void)from, (void)stream, (void)data, (void)bytes, (void)what;
    error = "this channel has no point-to-point transfers";
    return false;
  }
  virtual bool flush(std::string &error) {
    (void)error;
    return true;
  }

  /// A transfer in flight (startExchange).
  struct Exchange {
    virtual ~Exchange() = default;
  };
  /// Starts what sendRecv does without waiting for it: the asynchronous
  /// collectives' steps. `tag` (at least kFirstAsyncTag) keeps transfers of
  /// different collectives in flight apart. Null, with `error` set, when it
  /// cannot start. This default runs the transfer to its end (channels
  /// without non-blocking transfers).
  virtual std::unique_ptr<Exchange> startExchange(int to, const void *send,
                                                  size_t sendBytes, int from,
                                                  void *recv, size_t recvBytes,
                                                  int tag, std::string &error) {
    (void)tag;
    if (!sendRecv(to, send, sendBytes, from, recv, recvBytes, "collective",
                  error))
      return nullptr;
    return std::make_unique<Exchange>();
  }
  /// True once `exchange` has completed; never blocks (it lets the
  /// transport move data, as MPI does only inside its calls).
  virtual bool testExchange(Exchange &exchange) {
    (void)exchange;
    return true;
  }
  static constexpr int kFirstAsyncTag = 64;
  /// How long a blocked wait may last before the peer counts as dead.
  virtual double timeoutSeconds() const { return 1e9; }
  /// The launcher's rank of group rank `rank` (for messages).
  virtual int worldRank(int rank) const { return rank; }

  /// Bytes this rank has sent through the channel.
  int64_t bytesSent() const { return sent; }
  /// Counts `bytes` sent for this group by another transport (NCCL).
  void countSent(int64_t bytes) { sent += bytes; }

  /// Copies `bytes` of `data` from group rank 0 to the others: set-up
  /// traffic (a communicator's bootstrap id), not counted in bytesSent.
  bool broadcast(void *data, size_t bytes, std::string &error) {
    int64_t before = sent;
    bool ok = true;
    if (rank() == 0)
      for (int r = 1; ok && r < size(); ++r)
        ok = sendRecv(r, data, bytes, r, nullptr, 0, "broadcast", error);
    else
      ok = sendRecv(0, nullptr, 0, 0, data, bytes, "broadcast", error);
    sent = before;
    return ok;
  }

protected:
  int64_t sent = 0;
};

/// A group of one rank: every collective is a copy.
class SelfChannel final : public Channel {
public:
  int rank() const override { return 0; }
  int size() const override { return 1; }
  bool sendRecv(int, const void *, size_t, int, void *, size_t, const char *,
                std::string &error) override {
    error = "a group of one rank has no peer to send to";
    return false;
  }
};

} // namespace dtcrt

#endif // DTCRT_COMM_CHANNEL_H
