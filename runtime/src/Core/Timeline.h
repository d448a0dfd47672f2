//===- Timeline.h - the executed pipeline schedule of a step --------------===//
//
// Generated code marks the start and end of each forward and backward of a
// micro-batch, and of the sums of its gradients (dtcrt_pipeline_mark); the
// runtime keeps the last step's records, so tests and traces hold the
// executed order and its idle time against the schedule the compiler chose.
//
//===----------------------------------------------------------------------===//

#ifndef DTCRT_CORE_TIMELINE_H
#define DTCRT_CORE_TIMELINE_H

#include <cstdint>
#include <string>
#include <vector>

namespace dtcrt {

/// One forward (kind 0) or backward (kind 1) of a micro-batch, or the sums
/// of a backward's gradients into the accumulated ones (kind 2), with its
/// start and end in seconds from the step's start.
struct TimelineEntry {
  int kind = 0, micro = 0, chunk = 0;
  double begin = 0, end = 0;
};

/// Starts a new step's records (the previous step's are dropped).
void timelineStartStep();
/// The records of the step that ran last, in executed order.
const std::vector<TimelineEntry> &timelineEntries();
/// When the step started, in seconds of the node's monotonic clock (the
/// same clock in every process of the node, so ranks' timelines align).
double timelineOriginSeconds();
/// The step's duration as the timeline saw it (its start to the end of the
/// last record).
double timelineStepSeconds();
/// The records as a JSON array ("F0", "B3", "A3" labels with begin/end
/// seconds).
std::string timelineJson();

/// Tracing (train --trace): records every kernel from here on.
void traceEnable();
bool traceEnabled();
/// The trace's clock, in microseconds.
double traceClockMicros();
/// Records an event of `track` from `begin` to `end` (traceClockMicros())
/// when tracing; `name` and `op` must outlive the trace.
void traceSpan(const char *name, const char *op, int track, double begin,
               double end);
/// Ends the kernel event left open at the end of a step.
void traceEndStep();
/// Writes the recorded events as a Chrome trace (chrome://tracing,
/// ui.perfetto.dev): process `rank` labelled `labels` (its mesh
/// coordinates, "dp 0, tp 1, pp 0"), track 0 the kernels, 1 the
/// collectives and transfers, 2 the pipeline's forwards and backwards, 3
/// the asynchronous collectives from their start to their completion.
bool writeTrace(const std::string &path, int rank, const std::string &labels,
                std::string &error);

} // namespace dtcrt

#endif // DTCRT_CORE_TIMELINE_H
