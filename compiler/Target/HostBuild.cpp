//===- HostBuild.cpp - compile the emitted program, then link it ----------===//

#include "compiler/Target/HostBuild.h"
#include "compiler/Target/TargetInfo.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/raw_ostream.h"

#include <atomic>
#include <memory>
#include <optional>
#include <thread>

using namespace mlir;
using namespace mlir::dtc;

/// Runs `argv` (its first element a program name or path) with its output
/// in `logFile`. False with `log` set (the program, named `name` when that
/// is not empty, and the log's first lines) on failure.
static bool runHostTool(llvm::ArrayRef<std::string> argv,
                        llvm::StringRef logFile, std::string &log,
                        llvm::StringRef name = {}) {
  auto program = llvm::sys::findProgramByName(argv.front());
  if (!program) {
    log = "cannot find '" + argv.front() + "'";
    return false;
  }
  llvm::SmallVector<llvm::StringRef> args(argv.begin(), argv.end());
  std::optional<llvm::StringRef> redirects[] = {std::nullopt, logFile, logFile};
  std::string error;
  int rc =
      llvm::sys::ExecuteAndWait(*program, args, std::nullopt, redirects,
                                /*SecondsToWait=*/0, /*MemoryLimit=*/0, &error);
  if (rc == 0)
    return true;
  auto text = llvm::MemoryBuffer::getFile(logFile);
  // The first lines: the rest is in the log file.
  std::string head = text ? (*text)->getBuffer().take_front(4000).str() : "";
  log = (name.empty() ? argv.front() : name.str()) + " failed" +
        (error.empty() ? "" : ": " + error) +
        " (the whole log: " + logFile.str() + ")\n" + head;
  return false;
}

/// Compiles `source` to `object` (both in one folder). False with `log`
/// set on failure; the tools' output goes to `logFile`.
static bool compileSource(const HostBuild &build, llvm::StringRef source,
                          llvm::StringRef object, llvm::StringRef logFile,
                          std::string &log) {
  // The compile runs in the source's folder and names the source and the
  // object relative to it: ccache hashes the source's path as given, and
  // every compile has its own OUTDIR.
  llvm::SmallString<256> folder(source);
  llvm::sys::path::remove_filename(folder);
  if (folder.empty())
    folder = ".";
  std::vector<std::string> compile = {
      "/bin/sh", "-c", "cd \"$0\" && exec \"$@\"", folder.str().str()};
  if (auto ccache = llvm::sys::findProgramByName("ccache"))
    compile.push_back(*ccache);
  compile.push_back(build.compiler);
  compile.insert(compile.end(), build.compileFlags.begin(),
                 build.compileFlags.end());
  compile.push_back("-c");
  compile.push_back(llvm::sys::path::filename(source).str());
  compile.push_back("-o");
  compile.push_back(llvm::sys::path::filename(object).str());
  return runHostTool(compile, logFile, log, build.compiler);
}

bool mlir::dtc::buildHostProgram(const HostBuild &build,
                                 llvm::ArrayRef<std::string> sources,
                                 llvm::StringRef output,
                                 llvm::StringRef logFile, std::string &log) {
  // Each object beside its source, each compile with a log of its own.
  size_t n = sources.size();
  std::vector<std::string> objects(n), logFiles(n), logs(n);
  for (size_t k = 0; k < n; ++k) {
    llvm::SmallString<256> object(sources[k]);
    llvm::sys::path::replace_extension(object, ".o");
    objects[k] = object.str().str();
    logFiles[k] = k ? (logFile + "." + llvm::Twine(k)).str() : logFile.str();
  }
  // The compiles run side by side, one per hardware thread, in the order
  // given (the largest first): each worker takes the next. (Not a
  // vector<bool>, whose elements share words.)
  std::unique_ptr<bool[]> compiled(new bool[n]());
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t k; (k = next++) < n;)
      compiled[k] =
          compileSource(build, sources[k], objects[k], logFiles[k], logs[k]);
  };
  size_t jobs =
      std::min<size_t>(n, std::max(1u, std::thread::hardware_concurrency()));
  std::vector<std::thread> workers;
  for (size_t j = 1; j < jobs; ++j)
    workers.emplace_back(work);
  work();
  for (std::thread &worker : workers)
    worker.join();
  auto removeObjects = [&] {
    for (const std::string &object : objects)
      llvm::sys::fs::remove(object);
  };
  for (size_t k = 0; k < n; ++k) {
    if (k && compiled[k])
      llvm::sys::fs::remove(logFiles[k]);
    if (!compiled[k] && log.empty())
      log = "building " + output.str() + " failed: compiling " +
            llvm::sys::path::filename(sources[k]).str() + " with " + logs[k];
  }
  if (!log.empty()) {
    removeObjects();
    return false;
  }
  std::vector<std::string> link = {build.compiler};
  link.insert(link.end(), build.linkFlags.begin(), build.linkFlags.end());
  link.insert(link.end(), objects.begin(), objects.end());
  link.push_back("-o");
  link.push_back(output.str());
  link.insert(link.end(), build.libraries.begin(), build.libraries.end());
  bool linked = runHostTool(link, logFile, log);
  removeObjects();
  if (!linked)
    log = "building " + output.str() + " failed: linking with " + log;
  return linked;
}

bool mlir::dtc::writeProgramSources(llvm::StringRef folder,
                                    llvm::ArrayRef<SourceFile> sources,
                                    std::vector<std::string> &paths,
                                    std::string &error) {
  std::string stale =
      llvm::sys::path::stem(sources.front().name).str() + "-kernels-";
  std::error_code ec;
  for (llvm::sys::fs::directory_iterator it(folder, ec), end; !ec && it != end;
       it.increment(ec)) {
    llvm::StringRef name = llvm::sys::path::filename(it->path());
    if (name.starts_with(stale) && name.ends_with(".cpp"))
      llvm::sys::fs::remove(it->path());
  }
  paths.clear();
  for (const SourceFile &source : sources) {
    llvm::SmallString<256> path(folder);
    llvm::sys::path::append(path, source.name);
    llvm::raw_fd_ostream os(path, ec, llvm::sys::fs::OF_None);
    if (ec) {
      error = "cannot write '" + path.str().str() + "': " + ec.message();
      return false;
    }
    os << source.text;
    paths.push_back(path.str().str());
  }
  return true;
}
