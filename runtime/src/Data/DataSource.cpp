//===- DataSource.cpp - where each step's samples come from ---------------===//

#include "runtime/src/Data/DataSource.h"

#include "runtime/src/Core/Model.h"
#include "runtime/src/Data/Npy.h"

#include <algorithm>
#include <cstring>

using namespace dtcrt;

namespace {
/// Inputs read from .npy files, mapped into memory.
class NpyData : public DataSource {
public:
  void fill(int64_t position, int64_t count,
            const std::vector<uint8_t *> &buffers) const override {
    for (size_t i = 0; i < arrays.size(); ++i) {
      size_t sampleBytes = sampleSizes[i];
      for (int64_t k = 0; k < count; ++k) {
        int64_t src = (position + k) % samples;
        std::memcpy(buffers[i] + size_t(k) * sampleBytes,
                    arrays[i].data + size_t(src) * sampleBytes, sampleBytes);
      }
    }
  }
  int64_t numSamples() const override { return samples; }
  std::string describe() const override {
    std::string s;
    for (size_t i = 0; i < arrays.size(); ++i)
      s += (i ? ", " : "") + names[i];
    return s + " (" + std::to_string(samples) + " samples)";
  }

  std::vector<NpyArray> arrays;
  std::vector<size_t> sampleSizes;
  std::vector<std::string> names;
  int64_t samples = 0;
};

/// The --synthetic stream.
class SyntheticData : public DataSource {
public:
  explicit SyntheticData(const ModelInfo &model) : model(model) {}
  void fill(int64_t position, int64_t count,
            const std::vector<uint8_t *> &buffers) const override;
  int64_t numSamples() const override { return -1; }
  std::string describe() const override { return "synthetic"; }

private:
  const ModelInfo &model;
};
} // namespace

/// SplitMix64's finalizer: a strong 64-bit mix.
static uint64_t mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

/// FNV-1a of `s`.
static uint64_t hashName(const std::string &s) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : s) {
    h ^= c;
    h *= 0x100000001b3ull;
  }
  return h;
}

void SyntheticData::fill(int64_t position, int64_t count,
                         const std::vector<uint8_t *> &buffers) const {
  for (size_t i = 0; i < model.inputs.size(); ++i) {
    const TensorInfo &t = model.args[model.inputs[i]];
    uint64_t key = hashName(t.name);
    int64_t perSample = t.sampleElements();
    int64_t bound = t.desc->max_value > 0 ? t.desc->max_value : 1;
    if (!isFloatDType(t.dtype) && t.dtype != DType::I64) {
      // The largest value of the narrower integer type.
      int64_t typeMax = (int64_t(1) << (8 * dtypeSize(t.dtype) -
                                        (isSignedIntDType(t.dtype) ? 1 : 0))) -
                        1;
      bound = std::min(bound, typeMax);
    }
    for (int64_t k = 0; k < count; ++k) {
      uint64_t sampleKey = mix(key ^ mix(uint64_t(position + k)));
      for (int64_t e = 0; e < perSample; ++e) {
        uint64_t bits = mix(sampleKey + uint64_t(e));
        int64_t index = k * perSample + e;
        if (isFloatDType(t.dtype)) {
          // 53 random bits -> [0, 1) -> [-1, 1).
          storeFromDouble(t.dtype, buffers[i], index,
                          double(bits >> 11) * 0x1.0p-53 * 2.0 - 1.0);
        } else if (t.dtype == DType::Bool) {
          storeFromDouble(t.dtype, buffers[i], index, double(bits & 1));
        } else {
          int64_t v = int64_t(bits % (uint64_t(bound) + 1));
          if (t.dtype == DType::I64)
            std::memcpy(buffers[i] + index * 8, &v, 8);
          else
            storeFromDouble(t.dtype, buffers[i], index, double(v));
        }
      }
    }
  }
}

std::unique_ptr<DataSource> dtcrt::makeSyntheticData(const ModelInfo &model) {
  return std::make_unique<SyntheticData>(model);
}

/// "x, y" for the inputs of `model`.
static std::string inputList(const ModelInfo &model) {
  std::string s;
  for (int i : model.inputs)
    s += (s.empty() ? "" : ", ") + model.args[i].name;
  return s.empty() ? "none" : s;
}

bool dtcrt::openNpyData(const ModelInfo &model,
                        const std::vector<DataSpec> &specs,
                        const std::string &flag,
                        std::unique_ptr<DataSource> &out, std::string &error) {
  for (const DataSpec &spec : specs)
    if (model.findArg(spec.input, "input") < 0 &&
        std::find(model.pipelineInputs.begin(), model.pipelineInputs.end(),
                  spec.input) == model.pipelineInputs.end()) {
      error = flag + ": the model has no input '" + spec.input +
              "' (its inputs: " + inputList(model) + ")";
      return false;
    }
  auto data = std::make_unique<NpyData>();
  std::string firstFile;
  for (int i : model.inputs) {
    const TensorInfo &t = model.args[i];
    const DataSpec *spec = nullptr;
    for (const DataSpec &s : specs)
      if (s.input == t.name)
        spec = &s;
    if (!spec) {
      error = flag + ": no file for input '" + t.name + "' (pass " + flag +
              " " + t.name + "=FILE.npy; inputs: " + inputList(model) + ")";
      return false;
    }
    std::string label = flag + " " + t.name + "=" + spec->file;
    NpyArray array;
    if (!readNpy(spec->file, array, error)) {
      error = label + ": " + error;
      return false;
    }
    std::vector<int64_t> want(t.shape.begin() + 1, t.shape.end());
    if (array.dtype != t.dtype) {
      error = label + ": '" + spec->file + "' holds " +
              dtypeNumpyName(array.dtype) + " but input '" + t.name +
              "' takes " + dtypeNumpyName(t.dtype);
      return false;
    }
    if (array.shape.empty()) {
      error = label + ": '" + spec->file +
              "' holds a scalar; samples go along axis 0";
      return false;
    }
    std::vector<int64_t> got(array.shape.begin() + 1, array.shape.end());
    if (got != want) {
      error = label + ": '" + spec->file + "' has samples of shape " +
              shapeString(got) + " but input '" + t.name +
              "' takes samples of shape " + shapeString(want);
      return false;
    }
    if (array.shape[0] < 1) {
      error = label + ": '" + spec->file + "' holds no samples";
      return false;
    }
    if (data->arrays.empty()) {
      data->samples = array.shape[0];
      firstFile = spec->file;
    } else if (array.shape[0] != data->samples) {
      error = label + ": '" + spec->file + "' holds " +
              std::to_string(array.shape[0]) + " samples but '" + firstFile +
              "' holds " + std::to_string(data->samples) +
              "; every input needs the same number";
      return false;
    }
    data->sampleSizes.push_back(size_t(t.sampleElements()) *
                                dtypeSize(t.dtype));
    data->names.push_back(t.name + "=" + spec->file);
    data->arrays.push_back(std::move(array));
  }
  out = std::move(data);
  return true;
}
