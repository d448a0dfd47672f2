//===- Options.h - the `train` command line
//--------------------------------===//
//
// Parses the flags of OUTDIR/train (DESIGN.md section 1) into TrainOptions.
// Hyperparameter flags are derived from the model's `hyper` arguments
// (`weight_decay` is set by --weight-decay); their values are checked
// against each argument's dtype later (Hyper.h).
//
//===----------------------------------------------------------------------===//

#ifndef DTCRT_CORE_OPTIONS_H
#define DTCRT_CORE_OPTIONS_H

#include <cstdint>
#include <string>
#include <vector>

namespace dtcrt {

struct ModelInfo;

/// One NAME=FILE.npy entry of --data or --eval-data.
struct DataSpec {
  std::string input;
  std::string file;
};

/// A hyperparameter set on the command line.
struct HyperOverride {
  /// The flag as the user wrote it ("--lr", "--betas").
  std::string flag;
  /// The `hyper` argument it sets ("lr", "beta1").
  std::string hyper;
  /// The value text ("0.1", "cosine", "true").
  std::string text;
};

/// Everything `train` was asked to do.
struct TrainOptions {
  bool help = false;
  std::vector<DataSpec> data;
  bool synthetic = false;
  std::vector<DataSpec> evalData;
  int64_t evalEvery = 0;
  /// Total steps of the run (a resumed run continues up to it); -1 if unset.
  int64_t steps = -1;
  std::string logJsonl;
  std::string checkpointDir;
  int64_t checkpointEvery = 0;
  /// --keep-checkpoints: the newest N step folders stay (0: all).
  int64_t keepCheckpoints = 0;
  bool resume = false;
  std::string saveOnnx;
  std::string weights;
  bool guard = false;
  /// Folder to write the gradients of the run's first step into, one
  /// NAME.npy per parameter (programs compiled with --return-gradients).
  std::string dumpGradients;
  /// Folder each rank writes rank-N.json into at the end of the run: its
  /// mesh coordinates, the bytes it sent per step through each mesh-axis
  /// group and its memory high-water mark (measured, to hold plan.json
  /// against).
  std::string rankReport;
  /// Chrome trace file (--trace); each rank of a run of several writes its
  /// own (FILE with .rankN before the extension).
  std::string trace;
  std::vector<HyperOverride> hyper;
};

/// Parses argv[1, argc). `hyperNames` are the model's hyperparameters.
/// Checks flags, their values and the options' consistency, but not the
/// hyperparameter values (resolveHyperparameters does).
bool parseTrainOptions(int argc, const char *const *argv,
                       const std::vector<std::string> &hyperNames,
                       TrainOptions &out, std::string &error);

/// The --help text for `model`.
std::string trainUsage(const ModelInfo &model);

/// Parses a whole decimal integer; false on junk or overflow.
bool parseInt64(const std::string &text, int64_t &out);

/// Parses a whole finite floating-point number.
bool parseDouble(const std::string &text, double &out);

} // namespace dtcrt

#endif // DTCRT_CORE_OPTIONS_H
