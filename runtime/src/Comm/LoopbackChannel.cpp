//===- LoopbackChannel.cpp - ranks as threads of one process --------------===//

#include "runtime/src/Comm/LoopbackChannel.h"

#include <chrono>
#include <cstring>

using namespace dtcrt;

namespace dtcrt {
class LoopbackChannel final : public Channel {
public:
  LoopbackChannel(LoopbackHub &hub, int rank) : hub(hub), myRank(rank) {}
  int rank() const override { return myRank; }
  int size() const override { return hub.numRanks; }
  bool sendRecv(int to, const void *send, size_t sendBytes, int from,
                void *recv, size_t recvBytes, const char *what,
                std::string &error) override {
    if (sendBytes > 0) {
      LoopbackHub::Mailbox &box = hub.mailboxes[size_t(to)];
      LoopbackHub::Message m{myRank, {}};
      const auto *p = static_cast<const unsigned char *>(send);
      m.bytes.assign(p, p + sendBytes);
      {
        std::lock_guard<std::mutex> lock(box.mutex);
        box.messages.push_back(std::move(m));
      }
      box.ready.notify_all();
      sent += int64_t(sendBytes);
    }
    if (recvBytes == 0)
      return true;
    LoopbackHub::Mailbox &box = hub.mailboxes[size_t(myRank)];
    std::unique_lock<std::mutex> lock(box.mutex);
    auto deadline = std::chrono::steady_clock::now() +
                    std::chrono::duration<double>(hub.timeoutSeconds);
    for (;;) {
      for (auto it = box.messages.begin(); it != box.messages.end(); ++it) {
        if (it->from != from)
          continue;
        if (it->bytes.size() != recvBytes) {
          error = std::string(what) + ": rank " + std::to_string(from) +
                  " sent " + std::to_string(it->bytes.size()) +
                  " bytes where " + std::to_string(recvBytes) +
                  " were expected";
          return false;
        }
        std::memcpy(recv, it->bytes.data(), recvBytes);
        box.messages.erase(it);
        return true;
      }
      if (box.ready.wait_until(lock, deadline) == std::cv_status::timeout) {
        error =
            std::string(what) + ": no answer from rank " + std::to_string(from);
        return false;
      }
    }
  }

private:
  LoopbackHub &hub;
  int myRank;
};
} // namespace dtcrt

LoopbackHub::LoopbackHub(int size, double timeoutSeconds)
    : numRanks(size), timeoutSeconds(timeoutSeconds), mailboxes(size_t(size)) {}

std::unique_ptr<Channel> LoopbackHub::channel(int rank) {
  return std::make_unique<LoopbackChannel>(*this, rank);
}
