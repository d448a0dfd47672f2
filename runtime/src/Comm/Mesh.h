//===- Mesh.h - this process's place in the device mesh -------------------===//
//
// A run's ranks form the mesh the program was compiled for, with axes
// (pp, dp, tp) and tensor parallelism fastest (DESIGN.md section 1): rank =
// (pp * DP + dp) * TP + tp. The mesh owns one Channel per group of mesh
// axes (the ranks that differ only on those axes), created once at start,
// and ends every rank when one of them cannot go on.
//
//===----------------------------------------------------------------------===//

#ifndef DTCRT_COMM_MESH_H
#define DTCRT_COMM_MESH_H

#include "runtime/src/Comm/Channel.h"

#include <array>
#include <cstdint>
#include <memory>
#include <string>

namespace dtcrt {

/// Mesh axes, in the order of their masks (dtcrt.h's DTCRT_AXIS_*).
enum MeshAxis { kAxisPP = 0, kAxisDP = 1, kAxisTP = 2, kNumAxes = 3 };

/// "pp", "dp", "tp"; for a mask, the names joined by '+' ("dp+tp").
const char *axisName(int axis);
std::string axesName(int mask);

class Mesh {
public:
  /// Joins the run: for a mesh of more than one rank, initializes MPI,
  /// checks that the launcher started exactly that many ranks, and builds
  /// the channels. A one-rank mesh started without a launcher needs no MPI.
  bool init(const std::array<int, kNumAxes> &sizes, std::string &error);
  /// Leaves MPI cleanly at the end of a successful run.
  void finalize();

  bool isDistributed() const { return worldSize > 1; }
  int rank() const { return worldRank; }
  int size() const { return worldSize; }
  int coord(int axis) const { return coords[axis]; }
  int axisSize(int axis) const { return sizes[axis]; }
  /// "rank 5 (pp 0, dp 1, tp 1)", or "" for a one-rank run.
  std::string describeRank() const;

  /// The channel of the group of ranks that differ only on `mask`'s axes.
  Channel &group(int mask);
  /// Bytes this rank sent through the group of `mask`.
  int64_t bytesSent(int mask) const;

  /// Ends every rank of the run (MPI_Abort under MPI) after printing
  /// `message` prefixed with this rank.
  [[noreturn]] void abort(const std::string &message);

private:
  std::array<int, kNumAxes> sizes = {1, 1, 1}, coords = {0, 0, 0};
  int worldRank = 0, worldSize = 1;
  bool mpi = false;
  std::array<std::unique_ptr<Channel>, 1 << kNumAxes> channels;
};

/// The process's mesh.
Mesh &processMesh();

/// Ends the run with `message` ("train: error: ..." on stderr): every rank
/// under MPI, this process otherwise.
[[noreturn]] void abortRun(const std::string &message);

} // namespace dtcrt

#endif // DTCRT_COMM_MESH_H
