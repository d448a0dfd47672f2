//===- Timeline.cpp - the executed pipeline schedule of a step ------------===//

#include "runtime/src/Core/Timeline.h"

#include "dtcrt/dtcrt.h"

#include <chrono>
#include <cstdio>

using namespace dtcrt;

namespace {
struct Timeline {
  std::chrono::steady_clock::time_point start =
      std::chrono::steady_clock::now();
  std::vector<TimelineEntry> entries;
  double seconds() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                         start)
        .count();
  }
};

Timeline &timeline() {
  static Timeline t;
  return t;
}
} // namespace

void dtcrt::timelineStartStep() {
  timeline().entries.clear();
  timeline().start = std::chrono::steady_clock::now();
}

const std::vector<TimelineEntry> &dtcrt::timelineEntries() {
  return timeline().entries;
}

double dtcrt::timelineOriginSeconds() {
  // steady_clock is CLOCK_MONOTONIC: one clock for every process of a node.
  return std::chrono::duration<double>(timeline().start.time_since_epoch())
      .count();
}

double dtcrt::timelineStepSeconds() {
  const auto &e = timeline().entries;
  return e.empty() ? 0 : e.back().end;
}

std::string dtcrt::timelineJson() {
  std::string out = "[";
  char buffer[160];
  for (size_t i = 0; i < timeline().entries.size(); ++i) {
    const TimelineEntry &e = timeline().entries[i];
    std::snprintf(buffer, sizeof buffer,
                  "%s{\"op\": \"%c%d\", \"chunk\": %d, \"begin_s\": %.9f, "
                  "\"end_s\": %.9f}",
                  i ? ", " : "", e.kind == 0 ? 'F' : 'B', e.micro, e.chunk,
                  e.begin, e.end);
    out += buffer;
  }
  return out + "]";
}

extern "C" void dtcrt_pipeline_mark(dtcrt_step_ctx *, int kind, int micro,
                                    int chunk, int begin) {
  Timeline &t = timeline();
  double now = t.seconds();
  if (begin) {
    TimelineEntry e;
    e.kind = kind;
    e.micro = micro;
    e.chunk = chunk;
    e.begin = e.end = now;
    t.entries.push_back(e);
  } else if (!t.entries.empty()) {
    t.entries.back().end = now;
  }
}
