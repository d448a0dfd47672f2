//===- MappedWeights.cpp - weight files mapped, not copied ----------------===//

#include "compiler/Support/MappedWeights.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Process.h"

#include <mutex>
#include <sys/mman.h>
#include <vector>

using namespace mlir::dtc;

namespace {
class RegionFile : public MappedFile {
public:
  RegionFile(llvm::sys::fs::mapped_file_region region, std::string path)
      : region(std::move(region)), path(std::move(path)) {}
  ~RegionFile() override;
  llvm::ArrayRef<char> data() const override {
    return region ? llvm::ArrayRef<char>(region.const_data(), region.size())
                  : llvm::ArrayRef<char>();
  }

private:
  llvm::sys::fs::mapped_file_region region;
  std::string path;
};

/// The live mappings, by path, and their address ranges.
struct Registry {
  std::mutex mutex;
  llvm::StringMap<std::weak_ptr<MappedFile>> byPath;
  std::vector<std::pair<const char *, const char *>> ranges;
};

Registry &registry() {
  static Registry r;
  return r;
}

RegionFile::~RegionFile() {
  Registry &r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  llvm::ArrayRef<char> d = data();
  llvm::erase_if(r.ranges,
                 [&](const auto &range) { return range.first == d.begin(); });
  auto it = r.byPath.find(path);
  if (it != r.byPath.end() && it->second.expired())
    r.byPath.erase(it);
}
} // namespace

std::shared_ptr<MappedFile> mlir::dtc::mapWeightsFile(llvm::StringRef path,
                                                      std::string &error) {
  Registry &r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  auto it = r.byPath.find(path);
  if (it != r.byPath.end())
    if (std::shared_ptr<MappedFile> live = it->second.lock())
      return live;
  int fd;
  if (std::error_code ec = llvm::sys::fs::openFileForRead(path, fd)) {
    error = ec.message();
    return nullptr;
  }
  llvm::sys::fs::file_status status;
  std::error_code ec = llvm::sys::fs::status(fd, status);
  if (!ec && status.type() == llvm::sys::fs::file_type::directory_file)
    ec = std::make_error_code(std::errc::is_a_directory);
  llvm::sys::fs::mapped_file_region region;
  if (!ec && status.getSize() > 0)
    region = llvm::sys::fs::mapped_file_region(
        llvm::sys::fs::convertFDToNativeFile(fd),
        llvm::sys::fs::mapped_file_region::readonly, status.getSize(), 0, ec);
  llvm::sys::Process::SafelyCloseFileDescriptor(fd);
  if (ec) {
    error = ec.message();
    return nullptr;
  }
  auto file = std::make_shared<RegionFile>(std::move(region), path.str());
  llvm::ArrayRef<char> d = file->data();
  if (!d.empty())
    r.ranges.push_back({d.begin(), d.end()});
  r.byPath[path] = file;
  return file;
}

void mlir::dtc::releaseMappedPages(llvm::ArrayRef<char> data) {
  Registry &r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  for (const auto &[begin, end] : r.ranges) {
    if (data.begin() < begin || data.end() > end)
      continue;
    uintptr_t page = llvm::sys::Process::getPageSizeEstimate();
    uintptr_t lo = (uintptr_t(data.begin()) + page - 1) / page * page;
    uintptr_t hi = uintptr_t(data.end()) / page * page;
    if (hi > lo)
      ::madvise(reinterpret_cast<void *>(lo), hi - lo, MADV_DONTNEED);
    return;
  }
}
