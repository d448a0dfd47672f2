//===- DataSource.h - where each step's samples come from -----------------===//
//
// A step takes the global batch (G samples of every input) from a stream
// position. .npy files wrap around: stream position p reads sample p mod N.
// Synthetic data is an endless deterministic stream.
//
//===----------------------------------------------------------------------===//

#ifndef DTCRT_DATA_DATASOURCE_H
#define DTCRT_DATA_DATASOURCE_H

#include "runtime/src/Core/Options.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace dtcrt {

struct ModelInfo;

/// Samples of every data input of a model.
class DataSource {
public:
  virtual ~DataSource() = default;

  /// Writes `count` samples starting at stream position `position` into
  /// `buffers` (one per model input, in the order of ModelInfo::inputs).
  virtual void fill(int64_t position, int64_t count,
                    const std::vector<uint8_t *> &buffers) const = 0;

  /// Samples before the stream wraps, or -1 for an endless stream.
  virtual int64_t numSamples() const = 0;

  /// A line for the progress output ("x=x.npy, y=y.npy (60 samples)").
  virtual std::string describe() const = 0;
};

/// Opens one .npy per input of `model` as listed in `specs` (from `flag`,
/// "--data" or "--eval-data"), checking names, dtypes, sample shapes and
/// sample counts.
bool openNpyData(const ModelInfo &model, const std::vector<DataSpec> &specs,
                 const std::string &flag, std::unique_ptr<DataSource> &out,
                 std::string &error);

/// The --synthetic stream of `model`: floats uniform in [-1, 1], integers
/// uniform in [0, max_value] (0 or 1 when the descriptor has no bound),
/// bools 0 or 1; each element a hash of the input's name, the sample's
/// stream position and the element's index.
std::unique_ptr<DataSource> makeSyntheticData(const ModelInfo &model);

} // namespace dtcrt

#endif // DTCRT_DATA_DATASOURCE_H
