//===- Timeline.cpp - the executed pipeline schedule of a step ------------===//

#include "runtime/src/Core/Timeline.h"

#include "dtcrt/dtcrt.h"

#include <chrono>
#include <cstdio>
#include <memory>
#include <string>

using namespace dtcrt;

namespace {
/// One event of a trace: `name` (an ONNX node or op), `op`, its track and
/// its start and duration in microseconds of the monotonic clock.
struct TraceEvent {
  const char *name;
  const char *op;
  int track;
  double start, duration;
};

/// At most this many events are kept (about 64 MiB of them); the rest of a
/// long run is dropped, and the trace says so.
constexpr size_t kMaxTraceEvents = size_t(1) << 21;

struct Timeline {
  std::chrono::steady_clock::time_point start =
      std::chrono::steady_clock::now();
  std::vector<TimelineEntry> entries;
  bool tracing = false;
  std::vector<TraceEvent> events;
  /// The kernel event still open (-1: none), and events not kept.
  long open = -1;
  size_t dropped = 0;
  static double micros() {
    return std::chrono::duration<double, std::micro>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
  }
  void close(double now) {
    if (open >= 0)
      events[size_t(open)].duration = now - events[size_t(open)].start;
    open = -1;
  }
  void add(const char *name, const char *op, int track, double now,
           bool keepOpen) {
    if (events.size() >= kMaxTraceEvents) {
      ++dropped;
      return;
    }
    events.push_back({name, op, track, now, 0});
    if (keepOpen)
      open = long(events.size()) - 1;
  }
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
                  i ? ", " : "", "FBA"[e.kind], e.micro, e.chunk, e.begin,
                  e.end);
    out += buffer;
  }
  return out + "]";
}

void dtcrt::traceEnable() { timeline().tracing = true; }

bool dtcrt::traceEnabled() { return timeline().tracing; }

double dtcrt::traceClockMicros() { return Timeline::micros(); }

void dtcrt::traceSpan(const char *name, const char *op, int track, double begin,
                      double end) {
  Timeline &t = timeline();
  if (!t.tracing)
    return;
  size_t before = t.events.size();
  t.add(name, op, track, begin, /*keepOpen=*/false);
  if (t.events.size() > before)
    t.events.back().duration = end - begin;
}

void dtcrt::traceEndStep() {
  Timeline &t = timeline();
  if (t.tracing)
    t.close(Timeline::micros());
}

/// `text` as a JSON string literal.
static std::string quote(const char *text) {
  std::string out = "\"";
  for (const char *c = text ? text : ""; *c; ++c) {
    if (*c == '"' || *c == '\\')
      out += '\\';
    if (static_cast<unsigned char>(*c) < 0x20)
      continue;
    out += *c;
  }
  return out + "\"";
}

bool dtcrt::writeTrace(const std::string &path, int rank,
                       const std::string &labels, std::string &error) {
  Timeline &t = timeline();
  std::FILE *f = std::fopen(path.c_str(), "w");
  if (!f) {
    error = "--trace: cannot write '" + path + "'";
    return false;
  }
  static const char *const tracks[] = {
      "kernels", "communication", "pipeline schedule", "collectives in flight"};
  std::fprintf(f, "{\"displayTimeUnit\": \"ms\", \"traceEvents\": [\n");
  std::fprintf(f,
               "{\"name\": \"process_name\", \"ph\": \"M\", \"pid\": %d, "
               "\"args\": {\"name\": \"rank %d\"}}",
               rank, rank);
  std::fprintf(f,
               ",\n{\"name\": \"process_labels\", \"ph\": \"M\", \"pid\": %d, "
               "\"args\": {\"labels\": %s}}",
               rank, quote(labels.c_str()).c_str());
  for (int track = 0; track < 4; ++track)
    std::fprintf(f,
                 ",\n{\"name\": \"thread_name\", \"ph\": \"M\", \"pid\": %d, "
                 "\"tid\": %d, \"args\": {\"name\": \"%s\"}}",
                 rank, track, tracks[track]);
  for (const TraceEvent &e : t.events)
    std::fprintf(f,
                 ",\n{\"name\": %s, \"cat\": \"%s\", \"ph\": \"X\", "
                 "\"pid\": %d, \"tid\": %d, \"ts\": %.3f, \"dur\": %.3f, "
                 "\"args\": {\"op\": %s}}",
                 quote(e.name).c_str(), tracks[e.track], rank, e.track, e.start,
                 e.duration, quote(e.op).c_str());
  std::fprintf(f, "\n], \"otherData\": {\"dropped_events\": %zu}}\n",
               t.dropped);
  if (std::fclose(f) != 0) {
    error = "--trace: cannot write '" + path + "'";
    return false;
  }
  return true;
}

extern "C" void dtcrt_trace_op(dtcrt_step_ctx *, const char *node,
                               const char *op, int comm) {
  Timeline &t = timeline();
  double now = Timeline::micros();
  t.close(now);
  t.add(node, op, comm ? 1 : 0, now, true);
}

/// Labels of the pipeline's forwards and backwards ("F3", "B0.1"), kept
/// for the trace's life.
static const char *unitLabel(int kind, int micro, int chunk) {
  static std::vector<std::unique_ptr<std::string>> labels;
  std::string text = std::string(kind == 0 ? "F" : "B") +
                     std::to_string(micro) +
                     (chunk ? "." + std::to_string(chunk) : std::string());
  for (const auto &l : labels)
    if (*l == text)
      return l->c_str();
  labels.push_back(std::make_unique<std::string>(text));
  return labels.back()->c_str();
}

extern "C" void dtcrt_pipeline_mark(dtcrt_step_ctx *, int kind, int micro,
                                    int chunk, int begin) {
  Timeline &t = timeline();
  double now = t.seconds();
  // (A gradient accumulation is not a unit of the schedule: its kernels
  // show on the trace's kernel track.)
  if (t.tracing && kind != 2) {
    double us = Timeline::micros();
    if (begin)
      t.add(unitLabel(kind, micro, chunk), kind == 0 ? "forward" : "backward",
            2, us, false);
    else
      for (auto it = t.events.rbegin(); it != t.events.rend(); ++it)
        if (it->track == 2) {
          it->duration = us - it->start;
          break;
        }
  }
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
