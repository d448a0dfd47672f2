//===- TestONNXCommand.cpp - `dtc test-onnx` ------------------------------===//
//
// Runs ONNX backend-test folders (model.onnx + test_data_set_*/) through
// import, clean-up and the reference interpreter, each in a child process
// with a time and memory limit, and compares with ONNX's tolerance.
//
//===----------------------------------------------------------------------===//

#include "compiler/Driver/Commands.h"
#include "compiler/Driver/CompiledRunner.h"
#include "compiler/Driver/Diagnostics.h"
#include "compiler/Driver/ModelRunner.h"
#include "dialects/DTG/IR/DTGOps.h"

#include "mlir/IR/MLIRContext.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

using namespace mlir;
using namespace mlir::dtc;
using dtg::interp::Tensor;

namespace {
enum class Status { Pass, Fail, Unsupported };

struct TestResult {
  Status status = Status::Fail;
  std::string reason;
};

/// ONNX's backend-test tolerance.
constexpr double kRtol = 1e-3, kAtol = 1e-7;

std::string firstLine(StringRef text) { return text.split('\n').first.str(); }

/// Drops the model path (known from the test name) from a message.
std::string withoutPath(StringRef message, StringRef path) {
  if (message.consume_front(path))
    message = message.ltrim(": ");
  return message.str();
}

/// Lists test folders under `dir` (itself if it holds model.onnx).
void collectTests(StringRef dir, std::vector<std::string> &tests) {
  SmallString<256> model(dir);
  llvm::sys::path::append(model, "model.onnx");
  if (llvm::sys::fs::exists(model)) {
    tests.push_back(dir.str());
    return;
  }
  std::error_code ec;
  std::vector<std::string> children;
  for (llvm::sys::fs::directory_iterator it(dir, ec), end; it != end && !ec;
       it.increment(ec)) {
    SmallString<256> childModel(it->path());
    llvm::sys::path::append(childModel, "model.onnx");
    if (llvm::sys::fs::exists(childModel))
      children.push_back(it->path());
  }
  std::sort(children.begin(), children.end());
  tests.insert(tests.end(), children.begin(), children.end());
}

/// "suite/test" from a test folder path.
std::string testName(StringRef dir) {
  StringRef test = llvm::sys::path::filename(dir);
  StringRef suite =
      llvm::sys::path::filename(llvm::sys::path::parent_path(dir));
  return (suite + "/" + test).str();
}

/// Compares one output with ONNX's tolerance; a reason on mismatch.
std::string compare(const Tensor &got, const Tensor &want) {
  if (got.elementType != want.elementType) {
    std::string g, w;
    llvm::raw_string_ostream(g) << got.elementType;
    llvm::raw_string_ostream(w) << want.elementType;
    return "element type " + g + ", expected " + w;
  }
  if (got.shape != want.shape)
    return "shape differs";
  for (int64_t k = 0, n = got.numElements(); k < n; ++k) {
    if (got.isFloat()) {
      double a = got.f[k], b = want.f[k];
      if (std::isnan(a) && std::isnan(b))
        continue;
      if (std::isinf(a) || std::isinf(b)) {
        if (a == b)
          continue;
      } else if (std::fabs(a - b) <= kAtol + kRtol * std::fabs(b)) {
        continue;
      }
      return "value " + std::to_string(k) + " is " + std::to_string(a) +
             ", expected " + std::to_string(b);
    }
    if (got.i[k] != want.i[k])
      return "value " + std::to_string(k) + " is " + std::to_string(got.i[k]) +
             ", expected " + std::to_string(want.i[k]);
  }
  return "";
}

/// Reinterprets uint16 bits as bfloat16 values (how ONNX 1.12 stores
/// bfloat16 test data); other tensors pass unchanged.
Tensor bitsToBF16(const Tensor &t) {
  auto intType = dyn_cast<IntegerType>(t.elementType);
  if (!intType || intType.getWidth() != 16 || !intType.isUnsigned())
    return t;
  Tensor r =
      Tensor::zeros(BFloat16Type::get(t.elementType.getContext()), t.shape);
  for (int64_t k = 0; k < t.numElements(); ++k) {
    uint32_t bits = uint32_t(t.i[k]) << 16;
    float v;
    std::memcpy(&v, &bits, 4);
    r.f[k] = v;
  }
  return r;
}

/// Runs one test folder in this process.
TestResult runTest(StringRef dir, bool compiled) {
  TestResult result;
  MLIRContext context;
  context.disableMultithreading();
  DriverDiagnostics diagnostics(&context, /*print=*/false);
  SmallString<256> modelPath(dir);
  llvm::sys::path::append(modelPath, "model.onnx");

  std::string error;
  std::optional<std::vector<std::string>> inputNames =
      readGraphInputNames(modelPath, error);
  if (!inputNames) {
    result.reason = error;
    return result;
  }
  // Data sets in order.
  std::vector<std::string> sets;
  std::error_code ec;
  for (llvm::sys::fs::directory_iterator it(dir, ec), end; it != end && !ec;
       it.increment(ec))
    if (llvm::sys::path::filename(it->path()).starts_with("test_data_set_"))
      sets.push_back(it->path());
  std::sort(sets.begin(), sets.end());
  if (sets.empty()) {
    result.reason = "no test_data_set_* folder";
    return result;
  }

  auto readSet = [&](StringRef set, StringRef prefix,
                     std::vector<std::pair<std::string, Tensor>> &out) {
    for (unsigned k = 0;; ++k) {
      SmallString<256> file(set);
      llvm::sys::path::append(file, (prefix + Twine(k) + ".pb").str());
      if (!llvm::sys::fs::exists(file))
        return true;
      bool unsupported = false;
      auto t = readTensorFile(&context, file, error, unsupported);
      if (!t) {
        // The data is ONNX's own: what does not read as a tensor is a
        // sequence or an optional, which dtc does not support.
        result.status = Status::Unsupported;
        result.reason = (llvm::sys::path::filename(file) + ": " + error +
                         (unsupported ? ""
                                      : " (sequences and optionals are "
                                        "not supported)"))
                            .str();
        return false;
      }
      out.push_back(std::move(*t));
    }
  };

  // Import once, with the first data set's inputs bindable as constants.
  std::vector<std::pair<std::string, Tensor>> firstInputs;
  if (!readSet(sets.front(), "input_", firstInputs))
    return result;
  ImportOptions options;
  for (auto [k, entry] : llvm::enumerate(firstInputs)) {
    std::string name = k < inputNames->size() ? (*inputNames)[k] : entry.first;
    options.bindableInputs[name] = entry.second;
  }
  ImportFailure kind = ImportFailure::Invalid;
  FailureOr<OwningOpRef<ModuleOp>> module =
      importAndClean(&context, modelPath, options, &kind);
  if (failed(module)) {
    result.status =
        kind == ImportFailure::Unsupported ? Status::Unsupported : Status::Fail;
    result.reason = withoutPath(firstLine(diagnostics.firstError()), modelPath);
    return result;
  }
  // Training-mode dropout with a nonzero ratio draws from dtc's Philox
  // generator; ONNX's expected values come from numpy's.
  bool randomDropout = false;
  (*module)->walk([&](dtg::DropoutOp op) {
    randomDropout |= op.getRatio().convertToDouble() > 0;
  });
  if (randomDropout) {
    result.status = Status::Unsupported;
    result.reason = "training-mode dropout masks come from dtc's Philox "
                    "generator, not numpy's";
    return result;
  }
  llvm::StringSet<> bf16Inputs;
  auto main = (*module)->lookupSymbol<func::FuncOp>("main");
  for (unsigned i = 0; i < main.getNumArguments(); ++i)
    if (cast<RankedTensorType>(main.getArgument(i).getType())
            .getElementType()
            .isBF16())
      if (auto name = main.getArgAttrOfType<StringAttr>(i, attrs::kName))
        bf16Inputs.insert(name.getValue());
  // With --target cpu, the model runs as generated code.
  CompiledForward program;
  SmallString<128> buildDir;
  if (compiled) {
    std::string error;
    if (llvm::sys::fs::createUniqueDirectory("dtc-test-onnx", buildDir) ||
        failed(program.build(**module, buildDir, error))) {
      std::string message = diagnostics.firstError();
      result.status = StringRef(message).contains("has no kernel")
                          ? Status::Unsupported
                          : Status::Fail;
      result.reason =
          message.empty() ? error : withoutPath(firstLine(message), modelPath);
      llvm::sys::fs::remove_directories(buildDir);
      return result;
    }
  }
  auto cleanup = llvm::make_scope_exit([&] {
    if (compiled)
      llvm::sys::fs::remove_directories(buildDir);
  });
  for (const std::string &set : sets) {
    std::vector<std::pair<std::string, Tensor>> inputs, outputs;
    if (!readSet(set, "input_", inputs) || !readSet(set, "output_", outputs))
      return result;
    // ONNX stores bfloat16 test data as its uint16 bits.
    for (auto [k, entry] : llvm::enumerate(inputs)) {
      std::string name =
          k < inputNames->size() ? (*inputNames)[k] : entry.first;
      if (bf16Inputs.contains(name))
        entry.second = bitsToBF16(entry.second);
    }
    llvm::StringMap<Tensor> byName;
    for (auto [k, entry] : llvm::enumerate(inputs))
      byName[k < inputNames->size() ? (*inputNames)[k] : entry.first] =
          entry.second;
    std::string runError;
    FailureOr<SmallVector<Tensor>> got =
        compiled ? program.run(byName, runError) : runMain(**module, byName);
    if (failed(got) && compiled) {
      result.reason = firstLine(runError);
      return result;
    }
    if (failed(got)) {
      std::string message = diagnostics.firstError();
      result.status = StringRef(message).contains("has no kernel")
                          ? Status::Unsupported
                          : Status::Fail;
      result.reason = withoutPath(firstLine(message), modelPath);
      return result;
    }
    if (got->size() != outputs.size()) {
      result.reason = "produced " + std::to_string(got->size()) +
                      " outputs, expected " + std::to_string(outputs.size());
      return result;
    }
    for (auto [k, pair] : llvm::enumerate(llvm::zip(*got, outputs))) {
      Tensor want = std::get<1>(pair).second;
      if (std::get<0>(pair).elementType.isBF16())
        want = bitsToBF16(want);
      std::string mismatch = compare(std::get<0>(pair), want);
      if (!mismatch.empty()) {
        result.reason = "output #" + std::to_string(k) + ": " + mismatch;
        return result;
      }
    }
  }
  result.status = Status::Pass;
  return result;
}

/// A test running in a child process.
struct Child {
  size_t index;
  pid_t pid;
  int fd;
  std::string output;
  std::chrono::steady_clock::time_point start;
};

/// Starts `dir` in a child that writes "STATUS\tREASON" to a pipe.
Child startChild(size_t index, const std::string &dir,
                 const TestONNXCommandOptions &options) {
  int fds[2];
  if (pipe(fds) != 0)
    return Child{index, -1, -1, "", {}};
  pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    // Errors are reported through the pipe; a crash's stack dump is noise.
    int devNull = open("/dev/null", O_WRONLY);
    if (devNull >= 0)
      dup2(devNull, STDERR_FILENO);
    // Address-space cap: a little above the resident limit, so a runaway
    // allocation fails in the child instead of taking the machine.
    rlimit limit;
    limit.rlim_cur = limit.rlim_max = options.memoryLimitBytes + (1ull << 30);
    setrlimit(RLIMIT_AS, &limit);
    TestResult r = runTest(dir, options.target == "cpu");
    std::string line = (r.status == Status::Pass          ? "PASS"
                        : r.status == Status::Unsupported ? "UNSUPPORTED"
                                                          : "FAIL") +
                       std::string("\t") + r.reason;
    ssize_t unused = write(fds[1], line.data(), line.size());
    (void)unused;
    close(fds[1]);
    _exit(0);
  }
  close(fds[1]);
  return Child{index, pid, fds[0], "", std::chrono::steady_clock::now()};
}
} // namespace

int mlir::dtc::runTestONNXCommand(const TestONNXCommandOptions &options) {
  if (options.target != "interp" && options.target != "cpu")
    return reportError("--target must be 'interp' or 'cpu', got '" +
                       options.target + "'");
  std::vector<std::string> tests;
  for (const std::string &dir : options.dirs) {
    if (!llvm::sys::fs::is_directory(dir))
      return reportError("'" + dir + "' is not a folder");
    collectTests(dir, tests);
  }
  if (!options.filter.empty())
    llvm::erase_if(tests, [&](const std::string &t) {
      return !StringRef(t).contains(options.filter);
    });
  if (tests.empty()) {
    std::string dirs;
    for (const std::string &dir : options.dirs)
      dirs += (dirs.empty() ? "'" : ", '") + dir + "'";
    return reportError("no test folders (holding model.onnx) in " + dirs +
                       (options.filter.empty()
                            ? ""
                            : " match --filter '" + options.filter + "'"));
  }

  llvm::StringSet<> expected;
  if (!options.expectFile.empty()) {
    auto buffer = llvm::MemoryBuffer::getFile(options.expectFile);
    if (!buffer)
      return reportError("cannot read --expect-pass file '" +
                         options.expectFile + "'");
    SmallVector<StringRef> lines;
    (*buffer)->getBuffer().split(lines, '\n', -1, false);
    for (StringRef line : lines)
      if (!line.trim().empty() && !line.trim().starts_with("#"))
        expected.insert(line.trim());
  }

  std::vector<std::optional<TestResult>> results(tests.size());
  std::vector<Child> running;
  size_t next = 0, printed = 0;
  unsigned jobs = std::max(1u, options.jobs);
  unsigned passed = 0, failed = 0, skipped = 0, regressions = 0;

  auto finish = [&](Child &child, TestResult result) {
    close(child.fd);
    results[child.index] = std::move(result);
  };
  auto printReady = [&] {
    while (printed < tests.size() && results[printed]) {
      const TestResult &r = *results[printed];
      std::string name = testName(tests[printed]);
      switch (r.status) {
      case Status::Pass:
        ++passed;
        llvm::outs() << "PASS " << name << "\n";
        break;
      case Status::Fail:
        ++failed;
        llvm::outs() << "FAIL " << name << ": " << r.reason << "\n";
        break;
      case Status::Unsupported:
        ++skipped;
        llvm::outs() << "UNSUPPORTED " << name << ": " << r.reason << "\n";
        break;
      }
      if (expected.contains(name) && r.status != Status::Pass) {
        ++regressions;
        llvm::outs() << "REGRESSION " << name << " (expected to pass)\n";
      }
      llvm::outs().flush();
      ++printed;
    }
  };

  while (printed < tests.size()) {
    while (running.size() < jobs && next < tests.size()) {
      Child child = startChild(next, tests[next], options);
      ++next;
      if (child.pid < 0) {
        results[child.index] = TestResult{Status::Fail, "cannot fork"};
        continue;
      }
      running.push_back(child);
    }
    // Collect output and exits.
    for (size_t c = 0; c < running.size();) {
      Child &child = running[c];
      pollfd pfd{child.fd, POLLIN, 0};
      while (poll(&pfd, 1, 0) > 0) {
        char buf[4096];
        ssize_t n = read(child.fd, buf, sizeof(buf));
        if (n <= 0)
          break;
        child.output.append(buf, n);
      }
      int status = 0;
      rusage usage;
      pid_t done = wait4(child.pid, &status, WNOHANG, &usage);
      double elapsed = std::chrono::duration<double>(
                           std::chrono::steady_clock::now() - child.start)
                           .count();
      if (done == 0 && elapsed > options.timeoutSeconds) {
        kill(child.pid, SIGKILL);
        wait4(child.pid, &status, 0, &usage);
        finish(child,
               TestResult{Status::Fail,
                          "timed out after " +
                              std::to_string(options.timeoutSeconds) + " s"});
      } else if (done == child.pid) {
        char buf[4096];
        ssize_t n;
        while ((n = read(child.fd, buf, sizeof(buf))) > 0)
          child.output.append(buf, n);
        uint64_t rss = uint64_t(usage.ru_maxrss) * 1024;
        TestResult r;
        if (WIFSIGNALED(status)) {
          r.reason =
              "crashed (signal " + std::to_string(WTERMSIG(status)) + ")";
        } else if (rss > options.memoryLimitBytes) {
          r.reason = "used " + std::to_string(rss >> 20) + " MiB";
        } else {
          auto [head, reason] = StringRef(child.output).split('\t');
          r.status = head == "PASS"          ? Status::Pass
                     : head == "UNSUPPORTED" ? Status::Unsupported
                                             : Status::Fail;
          r.reason = head.empty() ? "exited without a result" : reason.str();
        }
        finish(child, std::move(r));
      } else {
        ++c;
        continue;
      }
      running.erase(running.begin() + c);
    }
    printReady();
    if (!running.empty())
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  llvm::outs() << passed << " passed, " << failed << " failed, " << skipped
               << " skipped\n";
  if (!options.expectFile.empty())
    return regressions ? 1 : 0;
  return failed ? 1 : 0;
}
