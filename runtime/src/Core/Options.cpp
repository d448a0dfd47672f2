//===- Options.cpp - the `train` command line
//------------------------------===//

#include "runtime/src/Core/Options.h"

#include "runtime/src/Core/Model.h"
#include "runtime/src/Log/Json.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <set>

using namespace dtcrt;

bool dtcrt::parseInt64(const std::string &text, int64_t &out) {
  if (text.empty() || text[0] == ' ')
    return false;
  errno = 0;
  char *end = nullptr;
  long long v = std::strtoll(text.c_str(), &end, 10);
  if (errno != 0 || *end != '\0')
    return false;
  out = v;
  return true;
}

bool dtcrt::parseDouble(const std::string &text, double &out) {
  if (text.empty() || text[0] == ' ')
    return false;
  errno = 0;
  char *end = nullptr;
  double v = std::strtod(text.c_str(), &end);
  if (errno != 0 || *end != '\0' || !std::isfinite(v))
    return false;
  out = v;
  return true;
}

/// The flag that sets hyperparameter `name`: "weight_decay" -> "weight-decay".
static std::string flagOf(const std::string &name) {
  std::string flag = name;
  for (char &c : flag)
    if (c == '_')
      c = '-';
  return flag;
}

/// Hyperparameter flags a compiled model may or may not have (other
/// optimizers, precisions), so their absence gets a specific message.
static const char *const kKnownHyperFlags[] = {"lr",
                                               "momentum",
                                               "dampening",
                                               "nesterov",
                                               "betas",
                                               "beta1",
                                               "beta2",
                                               "eps",
                                               "weight-decay",
                                               "clip-norm",
                                               "lr-schedule",
                                               "warmup",
                                               "total-steps",
                                               "min-lr",
                                               "seed",
                                               "loss-scale-init",
                                               "loss-scale-window"};

/// Parses "NAME=FILE,NAME=FILE" into `out` (appending).
static bool parseDataList(const std::string &flag, const std::string &text,
                          std::vector<DataSpec> &out, std::string &error) {
  size_t start = 0;
  while (start <= text.size()) {
    size_t comma = text.find(',', start);
    if (comma == std::string::npos)
      comma = text.size();
    std::string entry = text.substr(start, comma - start);
    size_t eq = entry.find('=');
    if (entry.empty() || eq == std::string::npos || eq == 0 ||
        eq + 1 == entry.size()) {
      error = flag + " expects NAME=FILE.npy[,NAME=FILE.npy...], got '" +
              entry + "'";
      return false;
    }
    DataSpec spec{entry.substr(0, eq), entry.substr(eq + 1)};
    for (const DataSpec &other : out)
      if (other.input == spec.input) {
        error = flag + " names input '" + spec.input + "' twice";
        return false;
      }
    out.push_back(std::move(spec));
    start = comma + 1;
  }
  return true;
}

namespace {
/// Walks argv, splitting "--flag=value".
class ArgReader {
public:
  ArgReader(int argc, const char *const *argv) : argc(argc), argv(argv) {}
  bool next(std::string &flag, bool &hasInline, std::string &inlineValue) {
    if (index >= argc)
      return false;
    std::string arg = argv[index++];
    size_t eq = arg.find('=');
    hasInline = arg.rfind("--", 0) == 0 && eq != std::string::npos;
    flag = hasInline ? arg.substr(0, eq) : arg;
    inlineValue = hasInline ? arg.substr(eq + 1) : "";
    return true;
  }
  /// The value of `flag`: inline, or the next argument.
  bool value(const std::string &flag, bool hasInline,
             const std::string &inlineValue, std::string &out,
             std::string &error) {
    if (hasInline) {
      out = inlineValue;
      return true;
    }
    if (index >= argc) {
      error = flag + " needs a value";
      return false;
    }
    out = argv[index++];
    return true;
  }

private:
  int argc;
  const char *const *argv;
  int index = 1;
};
} // namespace

/// Parses a count flag's value (`minimum` and up).
static bool countValue(const std::string &flag, const std::string &text,
                       int64_t minimum, int64_t &out, std::string &error) {
  if (!parseInt64(text, out) || out < minimum) {
    error = flag + " expects " +
            (minimum > 0 ? std::string("a positive")
                         : std::string("a non-negative")) +
            " integer, got '" + text + "'";
    return false;
  }
  return true;
}

bool dtcrt::parseTrainOptions(int argc, const char *const *argv,
                              const std::vector<std::string> &hyperNames,
                              TrainOptions &out, std::string &error) {
  out = TrainOptions();
  std::set<std::string> hypers(hyperNames.begin(), hyperNames.end());
  ArgReader reader(argc, argv);
  std::string flag, inlineValue, value;
  bool hasInline = false;
  bool sawData = false;
  while (reader.next(flag, hasInline, inlineValue)) {
    auto takeValue = [&]() {
      return reader.value(flag, hasInline, inlineValue, value, error);
    };
    auto noValue = [&]() {
      if (hasInline) {
        error = flag + " takes no value";
        return false;
      }
      return true;
    };
    if (flag == "--help" || flag == "-h") {
      out.help = true;
      return true;
    }
    if (flag.rfind("--", 0) != 0) {
      error = "unexpected argument '" + flag + "' (flags start with --)";
      return false;
    }
    if (flag == "--data") {
      if (!takeValue() || !parseDataList(flag, value, out.data, error))
        return false;
      sawData = true;
    } else if (flag == "--eval-data") {
      if (!takeValue() || !parseDataList(flag, value, out.evalData, error))
        return false;
    } else if (flag == "--synthetic") {
      if (!noValue())
        return false;
      out.synthetic = true;
    } else if (flag == "--steps") {
      if (!takeValue() || !countValue(flag, value, 0, out.steps, error))
        return false;
    } else if (flag == "--eval-every") {
      if (!takeValue() || !countValue(flag, value, 1, out.evalEvery, error))
        return false;
    } else if (flag == "--checkpoint-every") {
      if (!takeValue() ||
          !countValue(flag, value, 1, out.checkpointEvery, error))
        return false;
    } else if (flag == "--keep-checkpoints") {
      if (!takeValue() ||
          !countValue(flag, value, 1, out.keepCheckpoints, error))
        return false;
    } else if (flag == "--log-jsonl" || flag == "--checkpoint-dir" ||
               flag == "--save-onnx" || flag == "--weights" ||
               flag == "--dump-gradients" || flag == "--rank-report" ||
               flag == "--trace") {
      if (!takeValue())
        return false;
      if (value.empty()) {
        error = flag + " needs a file name";
        return false;
      }
      (flag == "--log-jsonl"        ? out.logJsonl
       : flag == "--checkpoint-dir" ? out.checkpointDir
       : flag == "--save-onnx"      ? out.saveOnnx
       : flag == "--weights"        ? out.weights
       : flag == "--rank-report"    ? out.rankReport
       : flag == "--trace"          ? out.trace
                                    : out.dumpGradients) = value;
    } else if (flag == "--resume") {
      if (!noValue())
        return false;
      out.resume = true;
    } else if (flag == "--guard") {
      if (!noValue())
        return false;
      out.guard = true;
    } else if (flag == "--no-decay") {
      error = "--no-decay is fixed when the model is compiled (dtc compile "
              "--no-decay); train cannot change it";
      return false;
    } else if (flag == "--betas") {
      if (!takeValue())
        return false;
      size_t comma = value.find(',');
      if (!hypers.count("beta1") || !hypers.count("beta2")) {
        error = "--betas: this model has no Adam betas (it was compiled "
                "with another optimizer)";
        return false;
      }
      if (comma == std::string::npos) {
        error = "--betas expects B1,B2, got '" + value + "'";
        return false;
      }
      out.hyper.push_back({flag, "beta1", value.substr(0, comma)});
      out.hyper.push_back({flag, "beta2", value.substr(comma + 1)});
    } else {
      std::string name = flag.substr(2);
      std::string hyper;
      for (const std::string &h : hyperNames)
        if (flagOf(h) == name)
          hyper = h;
      if (hyper.empty()) {
        for (const char *known : kKnownHyperFlags)
          if (name == known) {
            error = flag + ": this model has no such hyperparameter (it was "
                           "compiled with another optimizer or precision)";
            return false;
          }
        error = "unknown flag '" + flag + "' (see --help)";
        return false;
      }
      // Boolean hyperparameters are switches: --nesterov, --nesterov=false.
      bool isSwitch = hyper == "nesterov";
      if (isSwitch && !hasInline) {
        value = "true";
      } else if (!takeValue()) {
        return false;
      }
      out.hyper.push_back({flag, hyper, value});
    }
  }

  // Consistency.
  if (out.steps < 0) {
    error = "--steps N is required";
    return false;
  }
  if (sawData && out.synthetic) {
    error = "--data and --synthetic contradict each other; pass one";
    return false;
  }
  if (out.evalEvery > 0 && out.evalData.empty()) {
    error = "--eval-every needs --eval-data";
    return false;
  }
  if (out.keepCheckpoints > 0 && out.checkpointDir.empty()) {
    error = "--keep-checkpoints needs --checkpoint-dir DIR";
    return false;
  }
  if (out.checkpointEvery > 0 && out.checkpointDir.empty()) {
    error = "--checkpoint-every needs --checkpoint-dir";
    return false;
  }
  if (out.resume && out.checkpointDir.empty()) {
    error = "--resume needs --checkpoint-dir";
    return false;
  }
  return true;
}

std::string dtcrt::trainUsage(const ModelInfo &model) {
  int ranks = model.meshSizes[0] * model.meshSizes[1] * model.meshSizes[2];
  std::string how =
      ranks == 1
          ? "run it directly or as `mpirun -np 1 train`"
          : "on " + std::to_string(ranks) +
                " ranks, mesh dp=" + std::to_string(model.meshSizes[1]) +
                ",tp=" + std::to_string(model.meshSizes[2]) +
                ",pp=" + std::to_string(model.meshSizes[0]) +
                ": run it as `mpirun -np " + std::to_string(ranks) +
                " train`; each data-parallel rank takes its share of each "
                "global batch";
  std::string s =
      "usage: train [--data NAME=FILE.npy,... | --synthetic] --steps N "
      "[options]\n"
      "\n"
      "Trains '" +
      model.name + "' as compiled by dtc (" + how +
      ").\n"
      "\n"
      "Data:\n"
      "  --data NAME=FILE.npy,...  one .npy per input, samples along axis 0;\n"
      "                            step k takes samples [k*G, (k+1)*G) modulo\n"
      "                            the file's sample count (G = global batch " +
      std::to_string(model.globalBatch) +
      ")\n"
      "  --synthetic               deterministic data instead: floats uniform "
      "in\n"
      "                            [-1, 1], integers in [0, the input's "
      "bound]\n"
      "  --steps N                 train until step N (a resumed run "
      "continues to N)\n"
      "  --eval-data NAME=FILE.npy,...  held-out data: forward-only loss in\n"
      "                            eval mode over floor(samples / G) batches\n"
      "                            (a remainder is left out)\n"
      "  --eval-every N            evaluate every N steps (default: at the "
      "end)\n"
      "\n"
      "Output:\n"
      "  --log-jsonl FILE          one JSON object per step (appended to when\n"
      "                            resuming)\n"
      "  --checkpoint-dir DIR      save DIR/step-NNNNNNNN/ (.npy per tensor +\n"
      "                            manifest.json) at the end of training\n"
      "  --checkpoint-every N      ... and every N steps\n"
      "  --keep-checkpoints N      keep only the newest N checkpoints\n"
      "  --resume                  continue from the newest checkpoint in DIR\n"
      "  --save-onnx FILE          write the model.onnx next to this program\n"
      "                            with the trained weights\n"
      "  --weights FILE            initial weights (default: weights.bin next\n"
      "                            to this program)\n"
      "  --guard                   check after every kernel that no arena "
      "byte\n"
      "                            outside a live buffer changed (slow)\n"
      "  --trace FILE              a Chrome/Perfetto trace of every step:\n"
      "                            kernels (ONNX node, op), collectives and\n"
      "                            transfers, pipeline forwards/backwards on\n"
      "                            tracks of their own; rank N of a run of\n"
      "                            several writes FILE with .rankN before its\n"
      "                            extension\n"
      "  --rank-report DIR         each rank writes DIR/rank-N.json: bytes\n"
      "                            sent per step per mesh axis, memory peak\n";
  bool hasGradients = false;
  for (const TensorInfo &t : model.results)
    hasGradients |= t.role == "gradient";
  if (hasGradients)
    s += "  --dump-gradients DIR      write the first step's gradients as\n"
         "                            DIR/NAME.npy (compiled with\n"
         "                            --return-gradients)\n";
  s += "\n"
       "Inputs:";
  for (int i : model.inputs) {
    const TensorInfo &t = model.args[i];
    std::vector<int64_t> sample(t.shape.begin() + 1, t.shape.end());
    std::string dims;
    for (int64_t d : sample)
      dims += (dims.empty() ? "" : "x") + std::to_string(d);
    s += "\n  " + t.name + ": " + dtypeNumpyName(t.dtype) +
         " samples of shape [" + dims + "]";
  }
  s += "\n\nHyperparameters (compiled-in defaults):";
  for (int i : model.hypers) {
    const TensorInfo &t = model.args[i];
    std::string shown = t.name == "lr_schedule" ? std::string(" NAME")
                        : t.name == "nesterov"  ? std::string("[=BOOL]")
                                                : std::string(" VALUE");
    std::string value = jsonNumber(t.desc->default_value);
    if (t.name == "lr_schedule") {
      int64_t kind = int64_t(t.desc->default_value);
      value = kind == 0 ? "constant" : kind == 1 ? "linear" : "cosine";
      shown += " (constant|linear|cosine)";
    }
    s += "\n  --" + flagOf(t.name) + shown + "  [" + value + "]";
  }
  if (std::find_if(model.hypers.begin(), model.hypers.end(), [&](int i) {
        return model.args[i].name == "beta1";
      }) != model.hypers.end())
    s += "\n  --betas B1,B2  sets beta1 and beta2";
  s += "\n\nErrors end with \"train: error: ...\" and exit status 1.\n";
  return s;
}
