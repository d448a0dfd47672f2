//===- Hyper.cpp - hyperparameters: compiled defaults and overrides -------===//

#include "runtime/src/Core/Hyper.h"

#include "runtime/src/Core/Model.h"
#include "runtime/src/Core/Options.h"
#include "runtime/src/Log/Json.h"

#include <cmath>
#include <cstring>
#include <limits>

using namespace dtcrt;

void HyperValue::store(void *data) const {
  switch (dtype) {
  case DType::I64:
    std::memcpy(data, &integer, 8);
    return;
  case DType::I32: {
    int32_t v = int32_t(integer);
    std::memcpy(data, &v, 4);
    return;
  }
  default:
    storeFromDouble(dtype, data, 0, asDouble());
  }
}

/// The range of integer dtype `t`.
static void intRange(DType t, int64_t &lo, int64_t &hi) {
  switch (t) {
  case DType::I32:
    lo = std::numeric_limits<int32_t>::min();
    hi = std::numeric_limits<int32_t>::max();
    return;
  case DType::I16:
    lo = std::numeric_limits<int16_t>::min();
    hi = std::numeric_limits<int16_t>::max();
    return;
  case DType::I8:
    lo = std::numeric_limits<int8_t>::min();
    hi = std::numeric_limits<int8_t>::max();
    return;
  case DType::U8:
    lo = 0;
    hi = 255;
    return;
  default:
    lo = std::numeric_limits<int64_t>::min();
    hi = std::numeric_limits<int64_t>::max();
  }
}

/// Parses `o.text` into `h` by its dtype.
static bool parseOverride(const HyperOverride &o, HyperValue &h,
                          std::string &error) {
  const std::string &text = o.text;
  h.flag = o.flag;
  if (h.dtype == DType::Bool) {
    if (text == "true" || text == "1" || text == "True" || text == "yes") {
      h.integer = 1;
      return true;
    }
    if (text == "false" || text == "0" || text == "False" || text == "no") {
      h.integer = 0;
      return true;
    }
    error = o.flag + " expects true or false, got '" + text + "'";
    return false;
  }
  if (isFloatDType(h.dtype)) {
    if (!parseDouble(text, h.real)) {
      error = o.flag + " expects a number, got '" + text + "'";
      return false;
    }
    return true;
  }
  if (h.name == "lr_schedule") {
    static const char *const kNames[] = {"constant", "linear", "cosine"};
    for (int64_t k = 0; k < 3; ++k)
      if (text == kNames[k]) {
        h.integer = k;
        return true;
      }
    error = o.flag + " expects constant, linear or cosine, got '" + text + "'";
    return false;
  }
  int64_t lo, hi;
  intRange(h.dtype, lo, hi);
  if (!parseInt64(text, h.integer) || h.integer < lo || h.integer > hi) {
    error = o.flag + " expects an integer, got '" + text + "'";
    return false;
  }
  return true;
}

/// The flag to blame for hyperparameter `h` in a message.
static std::string blame(const HyperValue &h) {
  if (!h.flag.empty())
    return h.flag;
  std::string flag = "--";
  for (char c : h.name)
    flag += c == '_' ? '-' : c;
  return flag + " (compiled-in)";
}

bool dtcrt::resolveHyperparameters(const ModelInfo &model,
                                   const TrainOptions &options,
                                   std::vector<HyperValue> &out,
                                   std::vector<std::string> &notes,
                                   std::string &error) {
  out.clear();
  for (int i : model.hypers) {
    const TensorInfo &t = model.args[i];
    HyperValue h;
    h.arg = i;
    h.name = t.name;
    h.dtype = t.dtype;
    double d = t.desc->default_value;
    if (isFloatDType(t.dtype)) {
      h.real = d;
    } else {
      int64_t lo, hi;
      intRange(t.dtype == DType::Bool ? DType::U8 : t.dtype, lo, hi);
      h.integer = std::isnan(d)     ? 0
                  : d <= double(lo) ? lo
                  : d >= double(hi) ? hi
                                    : int64_t(d);
    }
    out.push_back(h);
  }
  auto find = [&](const std::string &name) -> HyperValue * {
    for (HyperValue &h : out)
      if (h.name == name)
        return &h;
    return nullptr;
  };
  for (const HyperOverride &o : options.hyper) {
    HyperValue *h = find(o.hyper);
    if (!h) {
      error = o.flag + ": this model has no hyperparameter '" + o.hyper + "'";
      return false;
    }
    if (!parseOverride(o, *h, error))
      return false;
  }

  // Ranges, as torch.optim checks them.
  struct Check {
    const char *name;
    double lo;
    bool loOpen;
    double hi;
    bool hiOpen;
    const char *range;
  };
  const double inf = std::numeric_limits<double>::infinity();
  static const Check kChecks[] = {
      {"lr", 0, false, inf, false, "must not be negative"},
      {"min_lr", 0, false, inf, false, "must not be negative"},
      {"weight_decay", 0, false, inf, false, "must not be negative"},
      {"clip_norm", 0, false, inf, false, "must not be negative (0: off)"},
      {"momentum", 0, false, inf, false, "must not be negative"},
      {"dampening", 0, false, 1, false, "must lie in [0, 1]"},
      {"eps", 0, false, inf, false, "must not be negative"},
      {"beta1", 0, false, 1, true, "must lie in [0, 1)"},
      {"beta2", 0, false, 1, true, "must lie in [0, 1)"},
      {"warmup", 0, false, inf, false, "must not be negative"},
      {"total_steps", 0, false, inf, false, "must not be negative"},
      {"lr_schedule", 0, false, 2, false, "must be constant, linear or cosine"},
      {"loss_scale_init", 0, true, inf, false, "must be positive"},
      {"loss_scale_window", 1, false, inf, false, "must be at least 1"},
  };
  for (const Check &c : kChecks) {
    HyperValue *h = find(c.name);
    if (!h)
      continue;
    double v = h->asDouble();
    bool ok =
        (c.loOpen ? v > c.lo : v >= c.lo) && (c.hiOpen ? v < c.hi : v <= c.hi);
    if (!ok) {
      error = blame(*h) + " " + c.range + ", got " + jsonNumber(v);
      return false;
    }
  }

  // Combinations.
  HyperValue *nesterov = find("nesterov");
  if (nesterov && nesterov->integer) {
    HyperValue *momentum = find("momentum"), *dampening = find("dampening");
    if ((momentum && momentum->asDouble() <= 0) ||
        (dampening && dampening->asDouble() != 0)) {
      error = blame(*nesterov) +
              " needs a positive --momentum and zero --dampening";
      return false;
    }
  }
  HyperValue *schedule = find("lr_schedule");
  if (schedule && schedule->integer != 0) {
    HyperValue *total = find("total_steps"), *warmup = find("warmup");
    if (total && total->integer == 0) {
      total->integer = options.steps;
      notes.push_back(
          "the " + std::string(schedule->integer == 1 ? "linear" : "cosine") +
          " schedule runs over --steps " + std::to_string(options.steps) +
          " (set --total-steps to change it)");
    }
    if (total && warmup && warmup->integer >= total->integer) {
      error = blame(*warmup) + " " + std::to_string(warmup->integer) +
              " leaves no steps to the " +
              (schedule->integer == 1 ? "linear" : "cosine") +
              " schedule's --total-steps " + std::to_string(total->integer);
      return false;
    }
  }
  return true;
}
