//===- ChildProcess.cpp - run a function in a forked child ----------------===//

#include "compiler/Support/ChildProcess.h"

#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <fcntl.h>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

using namespace mlir::dtc;

static bool writeAll(int fd, const std::string &data) {
  const char *next = data.data();
  size_t left = data.size();
  while (left > 0) {
    ssize_t written = ::write(fd, next, left);
    if (written < 0 && errno == EINTR)
      continue;
    if (written <= 0)
      return false;
    next += written;
    left -= static_cast<size_t>(written);
  }
  return true;
}

ChildOutcome mlir::dtc::runInChild(llvm::function_ref<std::string()> body,
                                   double seconds, bool quietCrashes) {
  ChildOutcome outcome;
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) {
    outcome.error = "cannot create a pipe";
    return outcome;
  }
  llvm::outs().flush();
  llvm::errs().flush();
  pid_t child = ::fork();
  if (child < 0) {
    ::close(fds[0]);
    ::close(fds[1]);
    outcome.error = "cannot fork";
    return outcome;
  }
  if (child == 0) {
    ::close(fds[0]);
    if (quietCrashes)
      for (int sig : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGTRAP})
        std::signal(sig, SIG_DFL);
    bool sent = writeAll(fds[1], body());
    ::_exit(sent ? 0 : 1);
  }
  ::close(fds[1]);
  auto start = std::chrono::steady_clock::now();
  char buffer[1 << 16];
  for (;;) {
    double left = seconds > 0
                      ? seconds - std::chrono::duration<double>(
                                      std::chrono::steady_clock::now() - start)
                                      .count()
                      : 1e9;
    if (left <= 0) {
      outcome.timedOut = true;
      break;
    }
    struct pollfd ready = {fds[0], POLLIN, 0};
    int polled =
        ::poll(&ready, 1, static_cast<int>(std::min(left, 1e6) * 1000));
    if (polled == 0) {
      outcome.timedOut = true;
      break;
    }
    if (polled < 0)
      continue;
    ssize_t got = ::read(fds[0], buffer, sizeof(buffer));
    if (got < 0 && errno == EINTR)
      continue;
    if (got <= 0)
      break;
    outcome.output.append(buffer, static_cast<size_t>(got));
  }
  ::close(fds[0]);
  if (outcome.timedOut)
    ::kill(child, SIGKILL);
  int status = 0;
  while (::waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
  if (!outcome.timedOut && WIFSIGNALED(status))
    outcome.signal = WTERMSIG(status);
  else if (WIFEXITED(status))
    outcome.exitCode = WEXITSTATUS(status);
  return outcome;
}
