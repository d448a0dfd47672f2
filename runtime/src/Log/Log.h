//===- Log.h - the per-step JSON lines log and stderr progress ------------===//

#ifndef DTCRT_LOG_LOG_H
#define DTCRT_LOG_LOG_H

#include <cstdint>
#include <cstdio>
#include <string>

namespace dtcrt {

/// --log-jsonl FILE: one JSON object per line, flushed after each.
class JsonlLog {
public:
  JsonlLog() = default;
  JsonlLog(const JsonlLog &) = delete;
  JsonlLog &operator=(const JsonlLog &) = delete;
  ~JsonlLog();

  /// Opens `path`, truncated or (`append`) extended.
  bool open(const std::string &path, bool append, std::string &error);
  bool isOpen() const { return file != nullptr; }
  /// Writes `line` and a newline.
  bool write(const std::string &line, std::string &error);

private:
  std::FILE *file = nullptr;
  std::string path;
};

/// Prints one progress line ("train: ...") to stderr, unless progress is
/// quiet (every rank of a run but rank 0).
void progress(const std::string &line);
void setProgressQuiet(bool quiet);

/// `seconds` for people: "850 us", "12.3 ms", "4.56 s".
std::string formatSeconds(double seconds);

/// `bytes` for people: "1536 B", "12.0 KiB", "3.50 MiB".
std::string formatBytes(int64_t bytes);

} // namespace dtcrt

#endif // DTCRT_LOG_LOG_H
