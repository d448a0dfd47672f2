//===- Model.cpp - a checked view of a dtcrt_model_desc -------------------===//

#include "runtime/src/Core/Model.h"

#include <initializer_list>
#include <set>
#include <utility>

using namespace dtcrt;

int64_t TensorInfo::sampleElements() const {
  int64_t n = 1;
  for (size_t d = 1; d < shape.size(); ++d)
    n *= shape[d];
  return n;
}

int ModelInfo::findArg(const std::string &name, const std::string &role) const {
  for (size_t i = 0; i < args.size(); ++i)
    if (args[i].name == name && args[i].role == role)
      return int(i);
  return -1;
}

static bool isOneOf(const std::string &s,
                    std::initializer_list<const char *> options) {
  for (const char *o : options)
    if (s == o)
      return true;
  return false;
}

/// Fills `t` from `d`; `what` ("argument 3") names it in messages.
static bool describeTensor(const dtcrt_tensor_desc &d, bool isArg,
                           const std::string &what, TensorInfo &t,
                           std::string &error) {
  if (!d.name || !*d.name) {
    error = what + " has no name";
    return false;
  }
  t.desc = &d;
  t.name = d.name;
  std::string label = what + " '" + t.name + "'";
  t.role = d.role ? d.role : "";
  bool roleOk = isArg
                    ? isOneOf(t.role, {"parameter", "constant", "state",
                                       "optimizer_state", "input", "hyper",
                                       "step", "data_offset"})
                    : isOneOf(t.role, {"parameter", "state", "optimizer_state",
                                       "metric", "gradient"});
  if (!roleOk) {
    error = label + " has the unknown role '" + t.role + "'";
    return false;
  }
  std::optional<DType> dtype = parseDType(d.dtype ? d.dtype : "");
  if (!dtype || dtypeSize(*dtype) == 0 || *dtype == DType::U16 ||
      *dtype == DType::U32 || *dtype == DType::U64) {
    error = label + " has the unknown dtype '" +
            std::string(d.dtype ? d.dtype : "") + "'";
    return false;
  }
  t.dtype = *dtype;
  if (d.rank < 0 || d.rank > DTCRT_MAX_RANK) {
    error = label + " has rank " + std::to_string(d.rank) + ", outside [0, " +
            std::to_string(DTCRT_MAX_RANK) + "]";
    return false;
  }
  t.shape.assign(d.dims, d.dims + d.rank);
  uint64_t n = 1;
  for (int64_t dim : t.shape) {
    if (dim < 0) {
      error = label + " has a negative dimension";
      return false;
    }
    if (dim != 0 && n > kMaxTensorBytes / uint64_t(dim)) {
      error = label + " is too large";
      return false;
    }
    n *= uint64_t(dim);
  }
  if (n * dtypeSize(t.dtype) > kMaxTensorBytes) {
    error = label + " is too large";
    return false;
  }
  t.numElements = int64_t(n);
  t.bytes = size_t(n * dtypeSize(t.dtype));
  t.shardDim = d.shard_axes ? d.shard_dim : -1;
  t.shardAxes = d.shard_axes;
  if (d.shard_axes < 0 || d.shard_axes > 7 ||
      (d.shard_axes && (d.shard_dim < 0 || d.shard_dim >= d.rank))) {
    error = label + " has a malformed sharding";
    return false;
  }
  t.shardInnerAxes = d.shard_inner_axes;
  if ((d.shard_inner_axes & ~d.shard_axes) != 0 ||
      (d.shard_inner_axes && d.shard_inner_axes == d.shard_axes)) {
    error = label + " has a malformed sharding";
    return false;
  }
  if (d.model_rank < 0 || d.model_rank > DTCRT_MAX_RANK) {
    error = label + " has a malformed model shape";
    return false;
  }
  t.modelShape.assign(d.model_dims, d.model_dims + d.model_rank);
  if (d.weights_offset < -1) {
    error =
        label + " has the weights offset " + std::to_string(d.weights_offset);
    return false;
  }
  return true;
}

bool dtcrt::describeModel(const dtcrt_model_desc *desc, ModelInfo &out,
                          std::string &error) {
  out = ModelInfo();
  if (!desc) {
    error = "no model";
    return false;
  }
  out.desc = desc;
  out.name = desc->name ? desc->name : "model";
  if (!desc->step) {
    error = "the model has no step function";
    return false;
  }
  if (desc->num_args < 0 || desc->num_results < 0 ||
      (desc->num_args > 0 && !desc->args) ||
      (desc->num_results > 0 && !desc->results)) {
    error = "the model's argument or result list is malformed";
    return false;
  }
  const int *mesh[] = {&desc->mesh_pp, &desc->mesh_dp, &desc->mesh_tp};
  for (int a = 0; a < 3; ++a) {
    if (*mesh[a] < 0) {
      error = "the model's mesh has a negative axis";
      return false;
    }
    out.meshSizes[a] = *mesh[a] == 0 ? 1 : *mesh[a];
  }
  int dp = out.meshSizes[1];
  if (desc->global_batch < 1 || desc->micro_batch < 1 ||
      desc->global_batch % dp != 0 ||
      desc->global_batch / dp % desc->micro_batch != 0) {
    error = "the model's batch sizes (global " +
            std::to_string(desc->global_batch) + ", micro " +
            std::to_string(desc->micro_batch) + ") are inconsistent";
    return false;
  }
  if (desc->arena_bytes < 0) {
    error = "the model's arena size is negative";
    return false;
  }
  out.globalBatch = desc->global_batch;
  out.localBatch = desc->global_batch / dp;
  out.microBatch = desc->micro_batch;

  std::set<std::pair<std::string, std::string>> seen;
  for (int i = 0; i < desc->num_args; ++i) {
    TensorInfo t;
    if (!describeTensor(desc->args[i], true, "argument " + std::to_string(i), t,
                        error))
      return false;
    std::string label = "argument '" + t.name + "'";
    if (!seen.insert({t.name, t.role}).second) {
      error = "two arguments are called '" + t.name + "' with role '" + t.role +
              "'";
      return false;
    }
    if (t.isCarried()) {
      out.carried.push_back(i);
    } else if (t.role == "constant") {
      out.constants.push_back(i);
    } else if (t.role == "input") {
      if (t.shape.empty() || t.shape[0] != out.localBatch) {
        error = "input " + label +
                " must have one data-parallel rank's share of the global "
                "batch as its first dimension";
        return false;
      }
      out.inputs.push_back(i);
    } else if (t.role == "hyper") {
      if (t.numElements != 1) {
        error = "hyperparameter " + label + " is not a scalar";
        return false;
      }
      out.hypers.push_back(i);
    } else if (t.role == "data_offset") {
      if (out.dataOffsetArg >= 0 || t.numElements != 1 ||
          t.dtype != DType::I64) {
        error = "the data offset " + label +
                " must be the only i64 scalar of role data_offset";
        return false;
      }
      out.dataOffsetArg = i;
    } else if (t.role == "step") {
      if (out.stepArg >= 0 || t.numElements != 1 || isFloatDType(t.dtype) ||
          t.dtype == DType::Bool) {
        error = "the step counter " + label +
                " must be the only integer scalar of role step";
        return false;
      }
      out.stepArg = i;
    }
    out.args.push_back(std::move(t));
  }

  std::set<std::pair<std::string, std::string>> seenResults;
  for (int i = 0; i < desc->num_results; ++i) {
    TensorInfo t;
    if (!describeTensor(desc->results[i], false, "result " + std::to_string(i),
                        t, error))
      return false;
    std::string label = "result '" + t.name + "'";
    if (!seenResults.insert({t.name, t.role}).second) {
      error =
          "two results are called '" + t.name + "' with role '" + t.role + "'";
      return false;
    }
    int arg = -1;
    t.inPlace = desc->results[i].in_place != 0;
    if (t.inPlace && !t.isCarried()) {
      error = label + " (role " + t.role +
              ") is marked in place, but only carried state updates an "
              "argument";
      return false;
    }
    if (t.isCarried()) {
      arg = out.findArg(t.name, t.role);
      if (arg < 0) {
        error = label + " (role " + t.role +
                ") updates no argument of that name and role";
        return false;
      }
      const TensorInfo &a = out.args[arg];
      if (a.dtype != t.dtype || a.shape != t.shape) {
        error = label + " differs in dtype or shape from the argument it "
                        "updates";
        return false;
      }
    } else if (t.role == "metric") {
      if (t.numElements != 1) {
        error = "metric " + label + " is not a scalar";
        return false;
      }
      out.metrics.push_back(i);
      if (t.name == "loss")
        out.lossMetric = i;
    }
    out.resultToArg.push_back(arg);
    out.results.push_back(std::move(t));
  }
  if (out.lossMetric < 0) {
    error = "the model has no metric result called 'loss'";
    return false;
  }

  if (desc->num_eval_results < 0 ||
      (desc->num_eval_results > 0 && !desc->eval_results)) {
    error = "the model's eval result list is malformed";
    return false;
  }
  if (desc->num_eval_results > 0 && !desc->eval_step) {
    error = "the model describes eval results but has no eval step";
    return false;
  }
  for (int i = 0; i < desc->num_eval_results; ++i) {
    TensorInfo t;
    if (!describeTensor(desc->eval_results[i], false,
                        "eval result " + std::to_string(i), t, error))
      return false;
    if (t.role != "metric" || t.numElements != 1) {
      error = "eval result '" + t.name + "' is not a scalar metric";
      return false;
    }
    int *slot = t.name == "loss_sum"     ? &out.evalLossSum
                : t.name == "loss_count" ? &out.evalLossCount
                                         : nullptr;
    if (slot && *slot >= 0) {
      error = "two eval results are called '" + t.name + "'";
      return false;
    }
    if (slot)
      *slot = i;
    out.evalResults.push_back(std::move(t));
  }
  if (desc->num_eval_results > 0 &&
      (out.evalLossSum < 0 || out.evalLossCount < 0)) {
    error = "the model's eval results lack the metric 'loss_sum' or "
            "'loss_count'";
    return false;
  }
  return true;
}
