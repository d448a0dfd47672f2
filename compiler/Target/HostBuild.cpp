//===- HostBuild.cpp - compile the emitted program, then link it ----------===//

#include "compiler/Target/HostBuild.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"

#include <optional>

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

bool mlir::dtc::buildHostProgram(const HostBuild &build, llvm::StringRef source,
                                 llvm::StringRef output,
                                 llvm::StringRef logFile, std::string &log) {
  // The object is beside the source.
  llvm::SmallString<256> object(source);
  llvm::sys::path::replace_extension(object, ".o");
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
  if (!runHostTool(compile, logFile, log, build.compiler)) {
    llvm::sys::fs::remove(object);
    log = "building " + output.str() + " failed: compiling with " + log;
    return false;
  }
  std::vector<std::string> link = {build.compiler};
  link.insert(link.end(), build.linkFlags.begin(), build.linkFlags.end());
  link.push_back(object.str().str());
  link.push_back("-o");
  link.push_back(output.str());
  link.insert(link.end(), build.libraries.begin(), build.libraries.end());
  bool linked = runHostTool(link, logFile, log);
  llvm::sys::fs::remove(object);
  if (!linked)
    log = "building " + output.str() + " failed: linking with " + log;
  return linked;
}
