//===- Files.h - files, folders and mapped files for the runtime ----------===//
//
// Thin POSIX helpers that report failures as messages naming the path,
// never by exiting: reading and mapping files, writing a file durably,
// creating and removing folders, and finding the running executable.
//
//===----------------------------------------------------------------------===//

#ifndef DTCRT_CORE_FILES_H
#define DTCRT_CORE_FILES_H

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace dtcrt {

/// A read-only view of a whole file, memory-mapped (or empty).
class MappedFile {
public:
  MappedFile() = default;
  MappedFile(const MappedFile &) = delete;
  MappedFile &operator=(const MappedFile &) = delete;
  MappedFile(MappedFile &&other) noexcept;
  MappedFile &operator=(MappedFile &&other) noexcept;
  ~MappedFile();

  /// Maps `path`; false with `error` naming the file on failure.
  bool open(const std::string &path, std::string &error);

  const uint8_t *data() const { return data_; }
  size_t size() const { return size_; }
  /// Hands back the resident pages wholly inside [offset, offset + bytes)
  /// (a later read maps them in again): a file read once, tensor by
  /// tensor, then never holds more than a tensor's pages.
  void release(size_t offset, size_t bytes) const;

private:
  void reset();
  const uint8_t *data_ = nullptr;
  size_t size_ = 0;
  void *mapping_ = nullptr;
};

/// Reads the whole of `path` into `out` (at most `maxBytes`).
bool readFile(const std::string &path, std::string &out, std::string &error,
              size_t maxBytes = size_t(1) << 31);

/// A piece of a file to write.
struct FilePiece {
  const void *data;
  size_t size;
};

/// Writes `pieces` one after another to `path` (created or truncated) and
/// flushes it to disk.
bool writeFileDurably(const std::string &path,
                      const std::vector<FilePiece> &pieces, std::string &error);

/// Writes `size` bytes to `path` (created or truncated) and flushes it.
inline bool writeFileDurably(const std::string &path, const void *bytes,
                             size_t size, std::string &error) {
  return writeFileDurably(path, {FilePiece{bytes, size}}, error);
}

/// Flushes the folder `path` itself to disk, so renames inside it persist.
bool syncFolder(const std::string &path, std::string &error);

/// True if `path` names an existing folder.
bool isFolder(const std::string &path);

/// True if `path` names an existing regular file.
bool isFile(const std::string &path);

/// Creates `path` and its missing parents.
bool createFolders(const std::string &path, std::string &error);

/// Removes `path` and everything in it (files and folders, no links
/// followed); a missing path is not an error.
bool removeTree(const std::string &path, std::string &error);

/// The entries of folder `path` (without "." and "..").
bool listFolder(const std::string &path, std::vector<std::string> &names,
                std::string &error);

/// Renames `from` to `to` (atomic on one file system).
bool renamePath(const std::string &from, const std::string &to,
                std::string &error);

/// `a` + "/" + `b` (no separator doubled).
std::string joinPath(const std::string &a, const std::string &b);

/// The folder part of `path` ("." when it has none).
std::string parentPath(const std::string &path);

/// The folder that holds the running executable (from /proc/self/exe).
bool executableFolder(std::string &folder, std::string &error);

} // namespace dtcrt

#endif // DTCRT_CORE_FILES_H
