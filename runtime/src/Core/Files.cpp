//===- Files.cpp - files, folders and mapped files for the runtime --------===//

#include "runtime/src/Core/Files.h"

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

using namespace dtcrt;

/// "'path': reason" for the current errno.
static std::string describe(const std::string &what, const std::string &path) {
  return what + " '" + path + "': " + std::strerror(errno);
}

MappedFile::MappedFile(MappedFile &&other) noexcept {
  *this = std::move(other);
}

MappedFile &MappedFile::operator=(MappedFile &&other) noexcept {
  if (this != &other) {
    reset();
    data_ = other.data_;
    size_ = other.size_;
    mapping_ = other.mapping_;
    other.data_ = nullptr;
    other.size_ = 0;
    other.mapping_ = nullptr;
  }
  return *this;
}

MappedFile::~MappedFile() { reset(); }

void MappedFile::reset() {
  if (mapping_)
    munmap(mapping_, size_);
  data_ = nullptr;
  size_ = 0;
  mapping_ = nullptr;
}

void MappedFile::release(size_t offset, size_t bytes) const {
  if (!mapping_ || offset >= size_)
    return;
  size_t page = size_t(sysconf(_SC_PAGESIZE));
  uintptr_t begin = uintptr_t(data_) + offset;
  uintptr_t end = begin + std::min(bytes, size_ - offset);
  uintptr_t lo = (begin + page - 1) / page * page, hi = end / page * page;
  if (hi > lo)
    madvise(reinterpret_cast<void *>(lo), hi - lo, MADV_DONTNEED);
}

bool MappedFile::open(const std::string &path, std::string &error) {
  reset();
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    error = describe("cannot open", path);
    return false;
  }
  struct stat st;
  if (fstat(fd, &st) != 0) {
    error = describe("cannot read", path);
    ::close(fd);
    return false;
  }
  if (!S_ISREG(st.st_mode)) {
    error = "'" + path + "' is not a regular file";
    ::close(fd);
    return false;
  }
  if (st.st_size > 0) {
    void *m = mmap(nullptr, size_t(st.st_size), PROT_READ, MAP_PRIVATE, fd, 0);
    if (m == MAP_FAILED) {
      error = describe("cannot map", path);
      ::close(fd);
      return false;
    }
    mapping_ = m;
    data_ = static_cast<const uint8_t *>(m);
    size_ = size_t(st.st_size);
  }
  ::close(fd);
  return true;
}

bool dtcrt::readFile(const std::string &path, std::string &out,
                     std::string &error, size_t maxBytes) {
  MappedFile file;
  if (!file.open(path, error))
    return false;
  if (file.size() > maxBytes) {
    error = "'" + path + "' is too large (" + std::to_string(file.size()) +
            " bytes)";
    return false;
  }
  out.assign(reinterpret_cast<const char *>(file.data()), file.size());
  return true;
}

bool dtcrt::writeFileDurably(const std::string &path,
                             const std::vector<FilePiece> &pieces,
                             std::string &error) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) {
    error = describe("cannot create", path);
    return false;
  }
  for (const FilePiece &piece : pieces) {
    const char *p = static_cast<const char *>(piece.data);
    size_t left = piece.size;
    while (left > 0) {
      ssize_t n = ::write(fd, p, left);
      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0) {
        error = describe("cannot write", path);
        ::close(fd);
        return false;
      }
      p += n;
      left -= size_t(n);
    }
  }
  if (fsync(fd) != 0) {
    error = describe("cannot flush", path);
    ::close(fd);
    return false;
  }
  if (::close(fd) != 0) {
    error = describe("cannot write", path);
    return false;
  }
  return true;
}

bool dtcrt::syncFolder(const std::string &path, std::string &error) {
  int fd = ::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) {
    error = describe("cannot open folder", path);
    return false;
  }
  bool ok = fsync(fd) == 0 || errno == EINVAL; // some file systems refuse
  if (!ok)
    error = describe("cannot flush folder", path);
  ::close(fd);
  return ok;
}

bool dtcrt::isFolder(const std::string &path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

bool dtcrt::isFile(const std::string &path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

bool dtcrt::createFolders(const std::string &path, std::string &error) {
  if (path.empty()) {
    error = "empty folder name";
    return false;
  }
  // Create each prefix in turn, iteratively.
  for (size_t pos = 1; pos <= path.size(); ++pos) {
    if (pos != path.size() && path[pos] != '/')
      continue;
    std::string prefix = path.substr(0, pos);
    if (mkdir(prefix.c_str(), 0755) != 0 && errno != EEXIST) {
      error = describe("cannot create folder", prefix);
      return false;
    }
  }
  if (!isFolder(path)) {
    error = "'" + path + "' exists and is not a folder";
    return false;
  }
  return true;
}

bool dtcrt::listFolder(const std::string &path, std::vector<std::string> &names,
                       std::string &error) {
  names.clear();
  DIR *dir = opendir(path.c_str());
  if (!dir) {
    error = describe("cannot read folder", path);
    return false;
  }
  while (struct dirent *entry = readdir(dir)) {
    std::string name = entry->d_name;
    if (name != "." && name != "..")
      names.push_back(name);
  }
  closedir(dir);
  return true;
}

bool dtcrt::removeTree(const std::string &path, std::string &error) {
  // Depth-first with an explicit stack: folders are removed once empty.
  struct Pending {
    std::string path;
    bool expanded;
  };
  std::vector<Pending> stack{{path, false}};
  while (!stack.empty()) {
    Pending &top = stack.back();
    struct stat st;
    if (lstat(top.path.c_str(), &st) != 0) {
      if (errno != ENOENT) {
        error = describe("cannot remove", top.path);
        return false;
      }
      stack.pop_back();
      continue;
    }
    if (!S_ISDIR(st.st_mode)) {
      if (unlink(top.path.c_str()) != 0) {
        error = describe("cannot remove", top.path);
        return false;
      }
      stack.pop_back();
      continue;
    }
    if (top.expanded) {
      if (rmdir(top.path.c_str()) != 0) {
        error = describe("cannot remove folder", top.path);
        return false;
      }
      stack.pop_back();
      continue;
    }
    top.expanded = true;
    std::string folder = top.path;
    std::vector<std::string> names;
    if (!listFolder(folder, names, error))
      return false;
    for (const std::string &name : names)
      stack.push_back({joinPath(folder, name), false});
  }
  return true;
}

bool dtcrt::renamePath(const std::string &from, const std::string &to,
                       std::string &error) {
  if (std::rename(from.c_str(), to.c_str()) != 0) {
    error =
        "cannot rename '" + from + "' to '" + to + "': " + std::strerror(errno);
    return false;
  }
  return true;
}

std::string dtcrt::joinPath(const std::string &a, const std::string &b) {
  if (a.empty())
    return b;
  if (a.back() == '/')
    return a + b;
  return a + "/" + b;
}

std::string dtcrt::parentPath(const std::string &path) {
  size_t slash = path.find_last_of('/');
  if (slash == std::string::npos)
    return ".";
  if (slash == 0)
    return "/";
  return path.substr(0, slash);
}

bool dtcrt::executableFolder(std::string &folder, std::string &error) {
  char buffer[PATH_MAX + 1];
  ssize_t n = readlink("/proc/self/exe", buffer, PATH_MAX);
  if (n <= 0) {
    error = describe("cannot find the executable through", "/proc/self/exe");
    return false;
  }
  buffer[n] = '\0';
  folder = parentPath(buffer);
  return true;
}
