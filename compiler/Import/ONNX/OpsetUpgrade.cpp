//===- OpsetUpgrade.cpp - lift an old ONNX model in a child process -------===//
//
// The child runs libonnx and writes one tag byte and a payload to a pipe:
// 'M' and the upgraded model, or 'E' and libonnx's exception message. A
// child that dies instead (a signal, or no complete answer) is reported
// with the signal. Nothing but libonnx and protobuf runs in the child, and
// it leaves with _exit: no atexit handler, buffer or sanitizer hook of the
// parent runs twice.
//
//===----------------------------------------------------------------------===//

#include "compiler/Import/ONNX/OpsetUpgrade.h"

#include <google/protobuf/io/coded_stream.h>
#include <onnx/defs/schema.h>
#include <onnx/shape_inference/implementation.h>
#include <onnx/version_converter/convert.h>

#include <cerrno>
#include <climits>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

using namespace mlir::dtc;

namespace {
constexpr char kModelTag = 'M';
constexpr char kErrorTag = 'E';
/// How long the child may take (a large model's upgrade takes seconds).
constexpr unsigned kSecondsAllowed = 600;
} // namespace

/// libonnx's work: shape inference (its own failures are not fatal: what it
/// could not type, the converter reports if it needs it), then conversion.
/// Returns the tag and payload for the parent.
static std::string upgradeInProcess(onnx::ModelProto &model, int64_t opset) {
  try {
    // Some adapters (Softmax 12 -> 13 among them) need their operand's
    // rank, which older exporters left for shape inference to find.
    onnx::ShapeInferenceOptions inference;
    inference.check_type = false;
    inference.error_mode = 0;
    onnx::shape_inference::InferShapes(
        model, onnx::OpSchemaRegistry::Instance(), inference);
  } catch (...) {
  }
  try {
    onnx::ModelProto upgraded =
        onnx::version_conversion::ConvertVersion(model, opset);
    std::string answer(1, kModelTag);
    if (!upgraded.AppendToString(&answer))
      return std::string(1, kErrorTag) +
             "the upgraded model does not serialize (larger than 2 GiB?)";
    return answer;
  } catch (const std::exception &e) {
    return std::string(1, kErrorTag) + e.what();
  } catch (...) {
    return std::string(1, kErrorTag) + "unknown error";
  }
}

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

static void readAll(int fd, std::string &data) {
  char buffer[1 << 16];
  for (;;) {
    ssize_t got = ::read(fd, buffer, sizeof(buffer));
    if (got < 0 && errno == EINTR)
      continue;
    if (got <= 0)
      return;
    data.append(buffer, static_cast<size_t>(got));
  }
}

[[noreturn]] static void runChild(onnx::ModelProto &model, int64_t opset,
                                  int fd) {
  // A crash is the parent's to report: no stack dump, no sanitizer report,
  // no fuzzer artifact from inherited handlers.
  for (int sig : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGTRAP, SIGALRM})
    std::signal(sig, SIG_DFL);
  // A converter that never finishes is stopped too (the default action of
  // SIGALRM ends the process).
  ::alarm(kSecondsAllowed);
  bool sent = writeAll(fd, upgradeInProcess(model, opset));
  ::_exit(sent ? 0 : 1);
}

std::optional<std::string> onnx_import::upgradeOpset(onnx::ModelProto &model,
                                                     int64_t opset) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0)
    return std::string("cannot create a pipe for libonnx's converter: ") +
           std::strerror(errno);
  pid_t child = ::fork();
  if (child < 0) {
    int error = errno;
    ::close(fds[0]);
    ::close(fds[1]);
    return std::string("cannot start a process for libonnx's converter: ") +
           std::strerror(error);
  }
  if (child == 0) {
    ::close(fds[0]);
    runChild(model, opset, fds[1]);
  }
  ::close(fds[1]);
  std::string answer;
  readAll(fds[0], answer);
  ::close(fds[0]);
  int status = 0;
  while (::waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }

  if (WIFSIGNALED(status) && WTERMSIG(status) == SIGALRM)
    return "libonnx's shape inference and converter did not finish in " +
           std::to_string(kSecondsAllowed) + " s";
  if (WIFSIGNALED(status))
    return std::string("libonnx crashed on the model (") +
           ::strsignal(WTERMSIG(status)) +
           "); its declared shapes may not fit its ops (check it with "
           "onnx.checker.check_model(model, full_check=True))";
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || answer.empty())
    return std::string("libonnx's converter stopped without an answer");
  if (answer.front() == kErrorTag)
    return answer.substr(1);

  model.Clear();
  google::protobuf::io::CodedInputStream stream(
      reinterpret_cast<const uint8_t *>(answer.data()) + 1,
      static_cast<int>(answer.size() - 1));
  stream.SetTotalBytesLimit(INT_MAX);
  if (answer.front() != kModelTag || !model.ParseFromCodedStream(&stream))
    return std::string("libonnx's converter answered with a broken model");
  return std::nullopt;
}
