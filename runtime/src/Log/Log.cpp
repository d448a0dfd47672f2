//===- Log.cpp - the per-step JSON lines log and stderr progress ----------===//

#include "runtime/src/Log/Log.h"

#include <cerrno>
#include <cstring>

using namespace dtcrt;

JsonlLog::~JsonlLog() {
  if (file)
    std::fclose(file);
}

bool JsonlLog::open(const std::string &p, bool append, std::string &error) {
  path = p;
  file = std::fopen(p.c_str(), append ? "a" : "w");
  if (!file) {
    error = "--log-jsonl: cannot write '" + p + "': " + std::strerror(errno);
    return false;
  }
  return true;
}

bool JsonlLog::write(const std::string &line, std::string &error) {
  if (std::fputs(line.c_str(), file) < 0 || std::fputc('\n', file) == EOF ||
      std::fflush(file) != 0) {
    error = "--log-jsonl: cannot write '" + path + "': " + std::strerror(errno);
    return false;
  }
  return true;
}

static bool &quietProgress() {
  static bool quiet = false;
  return quiet;
}

void dtcrt::setProgressQuiet(bool quiet) { quietProgress() = quiet; }

void dtcrt::progress(const std::string &line) {
  if (quietProgress())
    return;
  std::fprintf(stderr, "train: %s\n", line.c_str());
  std::fflush(stderr);
}

std::string dtcrt::formatSeconds(double seconds) {
  char buffer[32];
  if (seconds < 1e-3)
    std::snprintf(buffer, sizeof(buffer), "%.3g us", seconds * 1e6);
  else if (seconds < 1)
    std::snprintf(buffer, sizeof(buffer), "%.3g ms", seconds * 1e3);
  else
    std::snprintf(buffer, sizeof(buffer), "%.3g s", seconds);
  return buffer;
}

std::string dtcrt::formatBytes(int64_t bytes) {
  char buffer[32];
  if (bytes < 1024)
    std::snprintf(buffer, sizeof(buffer), "%lld B", (long long)bytes);
  else if (bytes < (int64_t(1) << 20))
    std::snprintf(buffer, sizeof(buffer), "%.1f KiB", double(bytes) / 1024);
  else if (bytes < (int64_t(1) << 30))
    std::snprintf(buffer, sizeof(buffer), "%.2f MiB",
                  double(bytes) / (1 << 20));
  else
    std::snprintf(buffer, sizeof(buffer), "%.2f GiB",
                  double(bytes) / (1 << 30));
  return buffer;
}
