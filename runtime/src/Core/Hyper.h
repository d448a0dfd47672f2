//===- Hyper.h - hyperparameters: compiled defaults and overrides ---------===//
//
// Every `hyper` argument of the step starts at its compiled-in default and
// may be overridden on the command line. Values are parsed by the
// argument's dtype and checked as torch.optim checks them.
//
//===----------------------------------------------------------------------===//

#ifndef DTCRT_CORE_HYPER_H
#define DTCRT_CORE_HYPER_H

#include "runtime/src/Core/DType.h"

#include <cstdint>
#include <string>
#include <vector>

namespace dtcrt {

struct ModelInfo;
struct TrainOptions;

/// The value of one hyperparameter argument.
struct HyperValue {
  /// Index of the argument.
  int arg = -1;
  std::string name;
  DType dtype = DType::F64;
  /// The value (floats); integers and bools use `integer`.
  double real = 0;
  int64_t integer = 0;
  /// The flag that set it, or empty for the compiled-in default.
  std::string flag;

  double asDouble() const {
    return isFloatDType(dtype) ? real : double(integer);
  }
  /// Writes the value into the argument buffer `data`.
  void store(void *data) const;
};

/// The hyperparameters of `model` after the overrides in `options`, checked;
/// `notes` collects adjustments worth telling the user about (a schedule's
/// length taken from --steps).
bool resolveHyperparameters(const ModelInfo &model, const TrainOptions &options,
                            std::vector<HyperValue> &out,
                            std::vector<std::string> &notes,
                            std::string &error);

} // namespace dtcrt

#endif // DTCRT_CORE_HYPER_H
