//===- Checkpoint.cpp - per-tensor checkpoints with a manifest
//-------------===//

#include "runtime/src/Checkpoint/Checkpoint.h"

#include "runtime/src/Core/Files.h"
#include "runtime/src/Data/Npy.h"
#include "runtime/src/Log/Json.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <unistd.h>

using namespace dtcrt;

static const char kManifest[] = "manifest.json";
static const char kFormat[] = "dtc-checkpoint";

uint32_t dtcrt::crc32(const void *data, size_t size, uint32_t crc) {
  static uint32_t table[256];
  static bool ready = [] {
    for (uint32_t i = 0; i < 256; ++i) {
      uint32_t c = i;
      for (int k = 0; k < 8; ++k)
        c = (c & 1) ? 0xedb88320u ^ (c >> 1) : c >> 1;
      table[i] = c;
    }
    return true;
  }();
  (void)ready;
  const uint8_t *p = static_cast<const uint8_t *>(data);
  crc = ~crc;
  for (size_t i = 0; i < size; ++i)
    crc = table[(crc ^ p[i]) & 0xff] ^ (crc >> 8);
  return ~crc;
}

static std::string checksumText(const void *data, size_t size) {
  char buffer[32];
  std::snprintf(buffer, sizeof(buffer), "crc32:%08x", crc32(data, size));
  return buffer;
}

std::string dtcrt::checkpointFolderName(int64_t step) {
  char buffer[40];
  std::snprintf(buffer, sizeof(buffer), "step-%08lld", (long long)step);
  return buffer;
}

/// A file name for tensor number `index` called `name`: its characters
/// outside [A-Za-z0-9._-] replaced, prefixed by the index so it is unique.
static std::string tensorFileName(size_t index, const std::string &name) {
  char prefix[32];
  std::snprintf(prefix, sizeof(prefix), "%04zu-", index);
  std::string safe;
  for (char c : name.substr(0, 96)) {
    bool plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                 (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-';
    safe += plain ? c : '_';
  }
  return prefix + safe + ".npy";
}

/// "[4, 2]".
static std::string jsonShape(const std::vector<int64_t> &shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

static int64_t stepOfFolderName(const std::string &name);

std::string dtcrt::sharedCheckpointTemp(const std::string &dir, int64_t step) {
  return joinPath(dir, ".tmp-" + checkpointFolderName(step));
}

bool dtcrt::writeCheckpointTensors(const std::string &tmp,
                                   const std::string &prefix,
                                   const std::vector<CheckpointTensor> &tensors,
                                   std::vector<std::string> &entries,
                                   std::string &error) {
  if (!createFolders(tmp, error))
    return false;
  // DTC_CHECKPOINT_PAUSE_MS: storage that takes this long after the first
  // file, so that a test can kill a rank while its checkpoint is half
  // written (test/e2e/pipeline-checkpoint.test).
  static const long pauseMs = [] {
    const char *text = std::getenv("DTC_CHECKPOINT_PAUSE_MS");
    return text ? std::max(0L, std::strtol(text, nullptr, 10)) : 0L;
  }();
  for (size_t i = 0; i < tensors.size(); ++i) {
    const CheckpointTensor &t = tensors[i];
    bool split = t.splitDim >= 0;
    const std::vector<int64_t> &stored = split ? t.blockShape : t.shape;
    std::string file = prefix + tensorFileName(i, t.name);
    if (!writeNpyFile(joinPath(tmp, file), t.dtype, stored, t.data, t.bytes,
                      error))
      return false;
    if (i == 0 && pauseMs > 0)
      usleep(useconds_t(pauseMs) * 1000);
    std::vector<int64_t> offsets(stored.size(), 0);
    JsonObjectWriter entry;
    entry.str("name", t.name)
        .str("role", t.role)
        .str("dtype", dtypeName(t.dtype))
        .raw("shape", jsonShape(t.shape));
    if (split) {
      offsets[size_t(t.splitDim)] = t.block * stored[size_t(t.splitDim)];
      entry.str("sharding", "split")
          .integer("split_dim", t.splitDim)
          .integer("blocks", t.blocks)
          .raw("block_shape", jsonShape(stored));
    } else {
      entry.str("sharding", "replicated");
    }
    entry.raw("offsets", jsonShape(offsets))
        .str("file", file)
        .str("checksum", checksumText(t.data, t.bytes));
    entries.push_back(entry.finish());
  }
  return true;
}

bool dtcrt::finishCheckpoint(
    const std::string &dir, const std::string &tmp,
    const std::string &modelName, int64_t globalBatch,
    const CheckpointPosition &position, const std::vector<std::string> &entries,
    const std::vector<std::pair<std::string, double>> &hyper, std::string &path,
    std::string &error) {
  std::string name = checkpointFolderName(position.step);
  auto fail = [&](const std::string &message) {
    std::string ignored;
    removeTree(tmp, ignored);
    error = "checkpoint '" + joinPath(dir, name) + "': " + message;
    return false;
  };
  std::string why;
  std::string list;
  for (size_t i = 0; i < entries.size(); ++i)
    list += (i ? ",\n    " : "\n    ") + entries[i];
  JsonObjectWriter hypers;
  for (const auto &h : hyper)
    hypers.num(h.first, h.second);
  JsonObjectWriter manifest;
  // Version 2 has split tensors; without them it is version 1's format.
  bool split =
      std::any_of(entries.begin(), entries.end(), [](const std::string &e) {
        return e.find("\"sharding\": \"split\"") != std::string::npos;
      });
  manifest.str("format", kFormat)
      .integer("version", split ? 2 : 1)
      .str("model", modelName)
      .integer("step", position.step)
      .integer("data_position", position.dataPosition)
      .integer("global_batch", globalBatch)
      .raw("hyperparameters", hypers.finish())
      .raw("tensors", "[" + list + "\n  ]");
  std::string text = manifest.finish() + "\n";
  // Written last: a folder with a manifest is complete.
  if (!writeFileDurably(joinPath(tmp, kManifest), text.data(), text.size(),
                        why) ||
      !syncFolder(tmp, why))
    return fail(why);

  std::string target = joinPath(dir, name);
  std::string old;
  if (isFolder(target)) {
    // Replace an earlier checkpoint of the same step: move it aside first.
    old = joinPath(dir, ".old-" + name + "-" + std::to_string(getpid()));
    if (!removeTree(old, why) || !renamePath(target, old, why))
      return fail(why);
  }
  if (!renamePath(tmp, target, why))
    return fail(why);
  if (!syncFolder(dir, why)) {
    error = why;
    return false;
  }
  if (!old.empty() && !removeTree(old, why)) {
    error = why;
    return false;
  }
  path = target;
  return true;
}

bool dtcrt::saveCheckpoint(
    const std::string &dir, const std::string &modelName, int64_t globalBatch,
    const CheckpointPosition &position,
    const std::vector<CheckpointTensor> &tensors,
    const std::vector<std::pair<std::string, double>> &hyper, std::string &path,
    std::string &error) {
  if (!createFolders(dir, error))
    return false;
  std::string name = checkpointFolderName(position.step);
  std::string tmp =
      joinPath(dir, ".tmp-" + name + "-" + std::to_string(getpid()));
  std::string why;
  std::vector<std::string> entries;
  if (!removeTree(tmp, why) ||
      !writeCheckpointTensors(tmp, "", tensors, entries, why)) {
    std::string ignored;
    removeTree(tmp, ignored);
    error = "checkpoint '" + joinPath(dir, name) + "': " + why;
    return false;
  }
  return finishCheckpoint(dir, tmp, modelName, globalBatch, position, entries,
                          hyper, path, error);
}

bool dtcrt::pruneCheckpoints(const std::string &dir, int64_t keep,
                             std::string &error) {
  std::vector<std::string> names;
  if (!listFolder(dir, names, error))
    return false;
  std::vector<std::pair<int64_t, std::string>> steps;
  for (const std::string &name : names)
    if (int64_t step = stepOfFolderName(name); step >= 0)
      steps.push_back({step, name});
  std::sort(steps.begin(), steps.end());
  for (size_t i = 0; i + size_t(keep) < steps.size(); ++i)
    if (!removeTree(joinPath(dir, steps[i].second), error))
      return false;
  return true;
}

/// The step number of a folder called "step-NNNNNNNN", or -1.
static int64_t stepOfFolderName(const std::string &name) {
  if (name.rfind("step-", 0) != 0 || name.size() <= 5 || name.size() > 24)
    return -1;
  int64_t step = 0;
  for (size_t i = 5; i < name.size(); ++i) {
    if (name[i] < '0' || name[i] > '9')
      return -1;
    step = step * 10 + (name[i] - '0');
  }
  return step;
}

bool dtcrt::findNewestCheckpoint(const std::string &dir, std::string &path,
                                 std::string &error) {
  if (!isFolder(dir)) {
    error = "--resume: the checkpoint folder '" + dir + "' does not exist";
    return false;
  }
  std::vector<std::string> names;
  if (!listFolder(dir, names, error))
    return false;
  int64_t best = -1;
  for (const std::string &name : names) {
    int64_t step = stepOfFolderName(name);
    std::string folder = joinPath(dir, name);
    if (step > best && isFile(joinPath(folder, kManifest))) {
      best = step;
      path = folder;
    }
  }
  if (best < 0) {
    error = "--resume: no complete checkpoint in '" + dir + "'";
    return false;
  }
  return true;
}

/// Reads member `key` of `object` as an integer.
static bool intMember(const JsonValue &object, const char *key, int64_t &out) {
  const JsonValue *v = object.get(key);
  return v && v->asInt64(out);
}

/// Reads member `key` of `object` as a string.
static bool stringMember(const JsonValue &object, const char *key,
                         std::string &out) {
  const JsonValue *v = object.get(key);
  if (!v || v->kind != JsonValue::Kind::String)
    return false;
  out = v->string;
  return true;
}

/// Reads member `key` of `object` as a list of integers.
static bool shapeMember(const JsonValue &object, const char *key,
                        std::vector<int64_t> &out) {
  const JsonValue *v = object.get(key);
  if (!v || v->kind != JsonValue::Kind::Array)
    return false;
  out.clear();
  for (const JsonValue &d : v->array) {
    int64_t x;
    if (!d.asInt64(x))
      return false;
    out.push_back(x);
  }
  return true;
}

bool dtcrt::loadCheckpoint(const std::string &path,
                           const std::vector<CheckpointTensor> &tensors,
                           CheckpointPosition &position, std::string &error,
                           bool others) {
  std::string manifestPath = joinPath(path, kManifest);
  auto fail = [&](const std::string &message) {
    error = "checkpoint '" + path + "': " + message;
    return false;
  };
  std::string text, why;
  if (!readFile(manifestPath, text, why, size_t(1) << 28))
    return fail(why);
  JsonValue manifest;
  if (!parseJson(text, manifest, why))
    return fail("manifest.json is not valid JSON: " + why);
  std::string format;
  int64_t version = 0;
  if (!stringMember(manifest, "format", format) || format != kFormat ||
      !intMember(manifest, "version", version))
    return fail("manifest.json is not a dtc checkpoint manifest");
  if (version != 1 && version != 2)
    return fail("manifest.json has version " + std::to_string(version) +
                ", which this build does not read");
  if (!intMember(manifest, "step", position.step) || position.step < 0 ||
      !intMember(manifest, "data_position", position.dataPosition) ||
      position.dataPosition < 0)
    return fail("manifest.json lacks a valid 'step' or 'data_position'");
  std::string folder = path;
  while (folder.size() > 1 && folder.back() == '/')
    folder.pop_back();
  int64_t named = stepOfFolderName(folder.substr(folder.find_last_of('/') + 1));
  if (named >= 0 && named != position.step)
    return fail("its manifest is of step " + std::to_string(position.step) +
                ", not " + std::to_string(named));
  const JsonValue *list = manifest.get("tensors");
  if (!list || list->kind != JsonValue::Kind::Array)
    return fail("manifest.json lacks its 'tensors' list");

  std::vector<bool> loaded(tensors.size(), false);
  // The blocks of each split tensor read so far (empty: none, or whole).
  std::vector<std::vector<bool>> blocksRead(tensors.size());
  for (const JsonValue &entry : list->array) {
    std::string name, role, dtypeText, file, checksum;
    if (!stringMember(entry, "name", name) ||
        !stringMember(entry, "role", role) ||
        !stringMember(entry, "dtype", dtypeText) ||
        !stringMember(entry, "file", file) ||
        !stringMember(entry, "checksum", checksum))
      return fail("manifest.json has a malformed tensor entry");
    size_t index = 0;
    while (index < tensors.size() &&
           (tensors[index].name != name || tensors[index].role != role))
      ++index;
    if (index == tensors.size() && others)
      continue; // another pipeline stage's
    if (index == tensors.size())
      return fail("it holds " + role + " '" + name +
                  "', which this model does not have (was it written by "
                  "another build?)");
    const CheckpointTensor &t = tensors[index];
    std::string label = role + " '" + name + "'";
    std::string sharding = "replicated";
    const JsonValue *shardingValue = entry.get("sharding");
    if (shardingValue && !stringMember(entry, "sharding", sharding))
      return fail(label + " has a malformed 'sharding'");
    if (sharding != "replicated" && sharding != "split")
      return fail(label + " has sharding '" + sharding +
                  "' (expected 'replicated' or 'split')");
    bool split = sharding == "split";
    if (loaded[index] || (!split && !blocksRead[index].empty()))
      return fail("it lists " + label + " twice");
    std::vector<int64_t> shape;
    const JsonValue *shapeValue = entry.get("shape");
    if (!shapeValue || shapeValue->kind != JsonValue::Kind::Array)
      return fail(label + " has no shape");
    for (const JsonValue &d : shapeValue->array) {
      int64_t dim;
      if (!d.asInt64(dim))
        return fail(label + " has a malformed shape");
      shape.push_back(dim);
    }
    if (dtypeText != dtypeName(t.dtype) || shape != t.shape)
      return fail(label + " is " + dtypeText + shapeString(shape) +
                  " there but " + dtypeName(t.dtype) + shapeString(t.shape) +
                  " in this model");
    if (file.empty() || file.find('/') != std::string::npos || file == "." ||
        file == "..")
      return fail(label + " names the file '" + file +
                  "', which is not inside the checkpoint");
    // A block: where it goes in the whole (the program's layout: the
    // block's shape with split_dim times `blocks`).
    std::vector<int64_t> stored = t.shape;
    int64_t splitDim = 0, blocks = 1, block = 0;
    if (split) {
      std::vector<int64_t> offsets;
      if (!intMember(entry, "split_dim", splitDim) ||
          !intMember(entry, "blocks", blocks) ||
          !shapeMember(entry, "block_shape", stored) ||
          !shapeMember(entry, "offsets", offsets) || splitDim < 0 ||
          size_t(splitDim) >= stored.size() || blocks < 1 ||
          offsets.size() != stored.size() || stored[size_t(splitDim)] < 1 ||
          offsets[size_t(splitDim)] % stored[size_t(splitDim)] != 0)
        return fail(label + " has a malformed block entry");
      block = offsets[size_t(splitDim)] / stored[size_t(splitDim)];
      int64_t elements = blocks;
      for (int64_t d : stored)
        elements *= d;
      if (block < 0 || block >= blocks ||
          size_t(elements) * dtypeSize(t.dtype) != t.bytes)
        return fail(label + "'s block at offset " +
                    std::to_string(offsets[size_t(splitDim)]) + " of " +
                    std::to_string(blocks) + " blocks of " +
                    shapeString(stored) + " does not tile " +
                    shapeString(t.shape));
      std::vector<bool> &read = blocksRead[index];
      if (read.empty())
        read.assign(size_t(blocks), false);
      if (read.size() != size_t(blocks) || read[size_t(block)])
        return fail("it lists block " + std::to_string(block) + " of " + label +
                    " twice, or in two splits");
    }
    NpyArray array;
    if (!readNpy(joinPath(path, file), array, why))
      return fail(why);
    size_t bytes = split ? t.bytes / size_t(blocks) : t.bytes;
    bool dtypeOk = array.dtype == t.dtype ||
                   (t.dtype == DType::BF16 && array.dtype == DType::U16);
    if (!dtypeOk || array.shape != stored || array.bytes != bytes)
      return fail("'" + file + "' does not hold " + dtypeText +
                  shapeString(stored) + " for " + label);
    std::string actual = checksumText(array.data, array.bytes);
    if (actual != checksum)
      return fail("'" + file + "' is corrupt: its checksum is " + actual +
                  " where the manifest says " + checksum);
    if (!split) {
      std::memcpy(t.data, array.data, t.bytes);
      loaded[index] = true;
      continue;
    }
    // Row o of the block (the dimensions before split_dim) goes to row o
    // of the whole, block `block` along split_dim.
    int64_t outer = 1, run = int64_t(dtypeSize(t.dtype));
    for (int64_t d = 0; d < splitDim; ++d)
      outer *= stored[size_t(d)];
    for (size_t d = size_t(splitDim); d < stored.size(); ++d)
      run *= stored[d];
    auto *whole = static_cast<uint8_t *>(t.data);
    for (int64_t o = 0; o < outer; ++o)
      std::memcpy(whole + (o * blocks + block) * run, array.data + o * run,
                  size_t(run));
    std::vector<bool> &read = blocksRead[index];
    read[size_t(block)] = true;
    loaded[index] =
        std::all_of(read.begin(), read.end(), [](bool b) { return b; });
  }
  for (size_t i = 0; i < tensors.size(); ++i)
    if (!loaded[i])
      return fail("it lacks " + tensors[i].role + " '" + tensors[i].name + "'" +
                  (blocksRead[i].empty() ? "" : " (some of its blocks)"));
  return true;
}
