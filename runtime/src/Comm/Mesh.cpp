//===- Mesh.cpp - this process's place in the device mesh -----------------===//

#include "runtime/src/Comm/Mesh.h"

#ifndef DTCRT_NO_MPI
#include "runtime/src/Comm/MpiChannel.h"
#endif

#include <cstdio>
#include <cstdlib>
#include <cstring>

using namespace dtcrt;

const char *dtcrt::axisName(int axis) {
  static const char *const names[] = {"pp", "dp", "tp"};
  return axis >= 0 && axis < kNumAxes ? names[axis] : "?";
}

std::string dtcrt::axesName(int mask) {
  std::string name;
  for (int a = 0; a < kNumAxes; ++a)
    if (mask & (1 << a))
      name += (name.empty() ? "" : "+") + std::string(axisName(a));
  return name.empty() ? "none" : name;
}

/// The environment variable through which a launcher gives `what`
/// ("SIZE" or "RANK"), and its value; false if none is set.
static bool launcherValue(const char *what, std::string &var, int &value) {
  const char *prefixes[] = {"OMPI_COMM_WORLD_", "PMI_", "PMIX_",
                            "MV2_COMM_WORLD_"};
  for (const char *prefix : prefixes) {
    std::string name = std::string(prefix) + what;
    if (const char *text = std::getenv(name.c_str())) {
      char *end = nullptr;
      long v = std::strtol(text, &end, 10);
      if (end != text && *end == '\0' && v >= 0 && v < (1L << 30)) {
        var = name;
        value = int(v);
        return true;
      }
    }
  }
  return false;
}

[[maybe_unused]] static double commTimeout() {
  if (const char *text = std::getenv("DTCRT_COMM_TIMEOUT_S")) {
    char *end = nullptr;
    double v = std::strtod(text, &end);
    if (end != text && v > 0)
      return v;
  }
  return 300;
}

bool Mesh::init(const std::array<int, kNumAxes> &meshSizes,
                std::string &error) {
  sizes = meshSizes;
  int expected = sizes[kAxisPP] * sizes[kAxisDP] * sizes[kAxisTP];
  std::string meshText = "dp=" + std::to_string(sizes[kAxisDP]) +
                         ",tp=" + std::to_string(sizes[kAxisTP]) +
                         ",pp=" + std::to_string(sizes[kAxisPP]);
  std::string var;
  int launched = 1;
  bool underLauncher = launcherValue("SIZE", var, launched);
  if (launched != expected) {
    if (!underLauncher)
      error = "this program was compiled for " + std::to_string(expected) +
              " ranks (mesh " + meshText + "); start it as `mpirun -np " +
              std::to_string(expected) + " " + "OUTDIR/train ...`";
    else
      error = "this program was compiled for " + std::to_string(expected) +
              (expected == 1 ? " rank" : " ranks") + " (mesh " + meshText +
              ") but was started as " + std::to_string(launched) + " ranks (" +
              var + "=" + std::to_string(launched) +
              "); `mpirun -np` must equal the mesh size, " +
              std::to_string(expected);
    return false;
  }
  for (auto &c : channels)
    c = std::make_unique<SelfChannel>();
  if (expected == 1)
    return true;

#ifdef DTCRT_NO_MPI
  error = "this runtime was built without MPI (DTCRT_WITH_MPI=OFF) and runs "
          "one rank, but the program was compiled for " +
          std::to_string(expected) + " ranks (mesh " + meshText +
          "); build it where OpenMPI is installed";
  return false;
#else
  int provided = 0;
  if (MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided) !=
      MPI_SUCCESS) {
    error = "MPI_Init failed";
    return false;
  }
  mpi = true;
  MPI_Comm_rank(MPI_COMM_WORLD, &worldRank);
  MPI_Comm_size(MPI_COMM_WORLD, &worldSize);
  // tp fastest, then dp, then pp.
  coords[kAxisTP] = worldRank % sizes[kAxisTP];
  coords[kAxisDP] = worldRank / sizes[kAxisTP] % sizes[kAxisDP];
  coords[kAxisPP] = worldRank / (sizes[kAxisTP] * sizes[kAxisDP]);
  double timeout = commTimeout();
  for (int mask = 1; mask < (1 << kNumAxes); ++mask) {
    // Ranks agree on the axes outside the mask (color) and are ordered by
    // their coordinates on the mask's axes, pp major (key).
    int color = 0, key = 0;
    for (int a = 0; a < kNumAxes; ++a) {
      if (mask & (1 << a))
        key = key * sizes[a] + coords[a];
      else
        color = color * sizes[a] + coords[a];
    }
    MPI_Comm comm;
    MPI_Comm_split(MPI_COMM_WORLD, color, key, &comm);
    int n = 0;
    MPI_Comm_size(comm, &n);
    std::vector<int> worldRanks(static_cast<size_t>(n));
    MPI_Allgather(&worldRank, 1, MPI_INT, worldRanks.data(), 1, MPI_INT, comm);
    channels[size_t(mask)] =
        std::make_unique<MpiChannel>(comm, std::move(worldRanks), timeout);
  }
  return true;
#endif
}

void Mesh::finalize() {
  if (!mpi)
    return;
#ifndef DTCRT_NO_MPI
  MPI_Barrier(MPI_COMM_WORLD);
  for (auto &c : channels)
    c.reset();
  MPI_Finalize();
#endif
  mpi = false;
}

std::string Mesh::describeRank() const {
  if (worldSize <= 1)
    return "";
  return "rank " + std::to_string(worldRank) + " (pp " +
         std::to_string(coords[kAxisPP]) + ", dp " +
         std::to_string(coords[kAxisDP]) + ", tp " +
         std::to_string(coords[kAxisTP]) + ")";
}

Channel &Mesh::group(int mask) { return *channels[size_t(mask) & 7]; }

int64_t Mesh::bytesSent(int mask) const {
  const auto &c = channels[size_t(mask) & 7];
  return c ? c->bytesSent() : 0;
}

void Mesh::abort(const std::string &message) {
  std::string who = describeRank();
  std::fprintf(stderr, "train: error: %s%s\n",
               who.empty() ? "" : (who + ": ").c_str(), message.c_str());
  std::fflush(stderr);
#ifndef DTCRT_NO_MPI
  if (mpi)
    MPI_Abort(MPI_COMM_WORLD, 1);
#endif
  std::exit(1);
}

Mesh &dtcrt::processMesh() {
  static Mesh mesh;
  return mesh;
}

void dtcrt::abortRun(const std::string &message) {
  processMesh().abort(message);
}
