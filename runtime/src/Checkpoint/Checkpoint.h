//===- Checkpoint.h - per-tensor checkpoints with a manifest
//---------------===//
//
// A checkpoint after step k is the folder DIR/step-<k, 8 digits>/ holding
// one .npy per carried tensor (parameters, model state, optimizer state)
// and manifest.json:
//
//   {"format": "dtc-checkpoint", "version": 2, "model": "mlp",
//    "step": 12, "data_position": 96, "global_batch": 8,
//    "hyperparameters": {"lr": 0.1, ...},
//    "tensors": [{"name": "fc.weight", "role": "parameter", "dtype": "f32",
//                 "shape": [4, 2], "sharding": "replicated",
//                 "offsets": [0, 0], "file": "0000-fc.weight.npy",
//                 "checksum": "crc32:1a2b3c4d"},
//                {"name": "fc2.weight", "role": "parameter", "dtype": "f32",
//                 "shape": [8, 4], "sharding": "split", "split_dim": 0,
//                 "blocks": 2, "block_shape": [4, 4], "offsets": [4, 0],
//                 "file": "r1-0003-fc2.weight.npy", ...}, ...]}
//
// A tensor split over the mesh is saved as its blocks, each by the one
// rank of its replicas that writes it: one entry per block, `offsets` its
// place in the whole (of `block_shape` with split_dim times `blocks`, the
// program's layout of `shape`), so that no rank gathers a whole tensor and
// a checkpoint loads on any mesh (the blocks are put together again and
// each rank takes its own). Version 1 (no split entries) still loads.
// `step` counts completed steps; `data_position` is the stream position of
// the next sample (for .npy data, its index along axis 0). The checksum is
// zlib's CRC-32 of the file's array bytes
// (zlib.crc32(numpy.load(file).tobytes())). Everything is written into a
// hidden temporary folder, flushed, and renamed into place, so a crash
// never leaves a half checkpoint under a step-* name.
//
//===----------------------------------------------------------------------===//

#ifndef DTCRT_CHECKPOINT_CHECKPOINT_H
#define DTCRT_CHECKPOINT_CHECKPOINT_H

#include "runtime/src/Core/DType.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace dtcrt {

/// One tensor of a checkpoint: where to save it from or load it into.
/// `shape` is the whole tensor's. Saving a block of a split tensor,
/// `data` holds `bytes` of `blockShape`: block `block` of `blocks` along
/// `splitDim` of the whole in the program's layout (splitDim -1: `data`
/// is the whole). Loading, `data` always takes the whole.
struct CheckpointTensor {
  std::string name;
  std::string role;
  DType dtype = DType::F32;
  std::vector<int64_t> shape;
  void *data = nullptr;
  size_t bytes = 0;
  int splitDim = -1;
  int64_t blocks = 1, block = 0;
  std::vector<int64_t> blockShape;
};

/// Where training stood when a checkpoint was taken.
struct CheckpointPosition {
  int64_t step = 0;
  int64_t dataPosition = 0;
};

/// zlib's CRC-32 of `size` bytes, continuing from `crc`.
uint32_t crc32(const void *data, size_t size, uint32_t crc = 0);

/// "step-00000012".
std::string checkpointFolderName(int64_t step);

/// Saves `tensors` as the checkpoint of `position` in `dir` (created if
/// needed); `path` receives the checkpoint's folder.
bool saveCheckpoint(const std::string &dir, const std::string &modelName,
                    int64_t globalBatch, const CheckpointPosition &position,
                    const std::vector<CheckpointTensor> &tensors,
                    const std::vector<std::pair<std::string, double>> &hyper,
                    std::string &path, std::string &error);

/// A distributed run's checkpoint is written by several ranks: each writes
/// the tensors and blocks it is the writer of into the shared temporary
/// folder of the step (writeCheckpointTensors, file names prefixed by the
/// rank) and sends the manifest entries it gets to the first rank, which
/// writes the manifest and renames the folder into place
/// (finishCheckpoint).
std::string sharedCheckpointTemp(const std::string &dir, int64_t step);
bool writeCheckpointTensors(const std::string &tmp, const std::string &prefix,
                            const std::vector<CheckpointTensor> &tensors,
                            std::vector<std::string> &entries,
                            std::string &error);
bool finishCheckpoint(const std::string &dir, const std::string &tmp,
                      const std::string &modelName, int64_t globalBatch,
                      const CheckpointPosition &position,
                      const std::vector<std::string> &entries,
                      const std::vector<std::pair<std::string, double>> &hyper,
                      std::string &path, std::string &error);
/// Removes all but the newest `keep` step-* folders of `dir`.
bool pruneCheckpoints(const std::string &dir, int64_t keep, std::string &error);

/// The newest complete checkpoint in `dir` (the highest step-* folder with a
/// manifest); false with `error` if there is none.
bool findNewestCheckpoint(const std::string &dir, std::string &path,
                          std::string &error);

/// Loads the checkpoint folder `path` into `tensors` (each whole): every one
/// must be in it with the same name, role, dtype and shape, whole or as
/// blocks that cover it once, each file's checksum must match, and it must
/// hold no other tensor unless `others` (a pipeline stage loads its own of
/// a whole model's).
bool loadCheckpoint(const std::string &path,
                    const std::vector<CheckpointTensor> &tensors,
                    CheckpointPosition &position, std::string &error,
                    bool others = false);

} // namespace dtcrt

#endif // DTCRT_CHECKPOINT_CHECKPOINT_H
