//===- Model.h - a checked view of a dtcrt_model_desc ---------------------===//
//
// Generated code describes its step with plain C structs; the runtime checks
// them once (known roles and dtypes, sane shapes, results that update an
// argument match it) and works on this view afterwards.
//
//===----------------------------------------------------------------------===//

#ifndef DTCRT_CORE_MODEL_H
#define DTCRT_CORE_MODEL_H

#include "dtcrt/dtcrt.h"
#include "runtime/src/Core/DType.h"

#include <cstdint>
#include <string>
#include <vector>

namespace dtcrt {

/// One argument or result of the step.
struct TensorInfo {
  const dtcrt_tensor_desc *desc = nullptr;
  std::string name;
  std::string role;
  DType dtype = DType::F32;
  std::vector<int64_t> shape;
  int64_t numElements = 0;
  size_t bytes = 0;
  /// A carried result written over its argument's buffer (desc->in_place).
  bool inPlace = false;
  /// A block of a tensor split over the mesh (desc->shard_dim/shard_axes):
  /// the split dimension and the mask of the axes splitting it (0: whole).
  int shardDim = -1;
  int shardAxes = 0;
  /// Of shardAxes, those splitting each block of the others again
  /// (desc->shard_inner_axes; 0: one level).
  int shardInnerAxes = 0;
  /// The whole tensor's shape in the model file, where it differs from the
  /// program's (desc->model_dims); empty otherwise.
  std::vector<int64_t> modelShape;

  /// True for the roles that carry values from one step to the next.
  bool isCarried() const {
    return role == "parameter" || role == "state" || role == "optimizer_state";
  }
  /// True for the roles whose initial value comes from weights.bin (when
  /// the descriptor gives an offset): carried tensors and constants.
  bool isLoaded() const { return isCarried() || role == "constant"; }
  /// Elements of one sample (axis 0 dropped), for inputs.
  int64_t sampleElements() const;
};

/// Most bytes one tensor of a step may have (2^46: far above any device).
constexpr uint64_t kMaxTensorBytes = uint64_t(1) << 46;

/// The checked model.
struct ModelInfo {
  const dtcrt_model_desc *desc = nullptr;
  std::string name;
  std::vector<TensorInfo> args, results;
  /// For each result: the argument it replaces (carried roles), or -1.
  std::vector<int> resultToArg;
  /// Argument indices by role.
  std::vector<int> carried, constants, inputs, hypers;
  int stepArg = -1;
  /// The argument holding this rank's first sample in the global batch
  /// (dropout's keys), or -1.
  int dataOffsetArg = -1;
  /// Result indices of role metric, and of the metric named "loss".
  std::vector<int> metrics;
  int lossMetric = -1;
  /// The results of the forward-only step when it has its own (the
  /// descriptor's eval_results), and the indices of its metrics loss_sum
  /// and loss_count in them; empty and -1 otherwise.
  std::vector<TensorInfo> evalResults;
  int evalLossSum = -1, evalLossCount = -1;
  /// The whole mesh's batch per step, the rows one data-parallel rank
  /// takes of it (its inputs' first dimension), and a micro-batch's.
  int64_t globalBatch = 0;
  int64_t localBatch = 0;
  int64_t microBatch = 0;
  /// Pipelines: the data inputs of every stage (a stage reads only its
  /// own, and --data may name the others').
  std::vector<std::string> pipelineInputs;
  /// The mesh sizes, pp, dp, tp.
  int meshSizes[3] = {1, 1, 1};

  /// The argument called `name` with role `role`, or -1.
  int findArg(const std::string &name, const std::string &role) const;
};

/// Checks `desc` and builds its view; on failure `error` says what is wrong
/// with the descriptor (a bug in the generated code, not a user error).
bool describeModel(const dtcrt_model_desc *desc, ModelInfo &out,
                   std::string &error);

} // namespace dtcrt

#endif // DTCRT_CORE_MODEL_H
