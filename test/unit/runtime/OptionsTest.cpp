//===- OptionsTest.cpp - the `train` command line and hyperparameters -----===//

#include "runtime/src/Core/Options.h"
#include "runtime/src/Core/Hyper.h"
#include "runtime/src/Core/Model.h"

#include "TestUtil.h"

#include <gtest/gtest.h>

using namespace dtcrt;

namespace {

/// An SGD model's hyperparameters, as dtc-build-train-step makes them.
class OptionsTest : public ::testing::Test {
protected:
  OptionsTest() {
    args = {test::tensor("w", "parameter", "f32", {2}),
            test::tensor("x", "input", "f32", {4, 2}),
            test::tensor("lr", "hyper", "f64", {}, 0.01),
            test::tensor("weight_decay", "hyper", "f64", {}, 0),
            test::tensor("clip_norm", "hyper", "f64", {}, 0),
            test::tensor("lr_schedule", "hyper", "i64", {}, 0),
            test::tensor("warmup", "hyper", "i64", {}, 0),
            test::tensor("total_steps", "hyper", "i64", {}, 0),
            test::tensor("min_lr", "hyper", "f64", {}, 0),
            test::tensor("seed", "hyper", "i64", {}, 7),
            test::tensor("momentum", "hyper", "f64", {}, 0.9),
            test::tensor("dampening", "hyper", "f64", {}, 0),
            test::tensor("nesterov", "hyper", "bool", {}, 0),
            test::tensor("step", "step", "i64", {})};
    results = {test::tensor("w", "parameter", "f32", {2}),
               test::tensor("loss", "metric", "f32", {})};
    desc = test::model(args, results);
    std::string error;
    EXPECT_TRUE(describeModel(&desc, info, error)) << error;
    for (int i : info.hypers)
      hyperNames.push_back(info.args[i].name);
  }

  /// Parses `argv` (after the program name).
  bool parse(std::vector<const char *> argv, std::string &error) {
    argv.insert(argv.begin(), "train");
    return parseTrainOptions(int(argv.size()), argv.data(), hyperNames, options,
                             error);
  }

  /// Parses and resolves; the value of hyperparameter `name` in `value`.
  bool resolve(std::vector<const char *> argv, std::string &error) {
    if (!parse(argv, error))
      return false;
    notes.clear();
    return resolveHyperparameters(info, options, hypers, notes, error);
  }
  double value(const std::string &name) {
    for (const HyperValue &h : hypers)
      if (h.name == name)
        return h.asDouble();
    ADD_FAILURE() << "no hyperparameter " << name;
    return 0;
  }

  std::vector<dtcrt_tensor_desc> args, results;
  dtcrt_model_desc desc;
  ModelInfo info;
  std::vector<std::string> hyperNames;
  TrainOptions options;
  std::vector<HyperValue> hypers;
  std::vector<std::string> notes;
};

TEST_F(OptionsTest, ParsesEveryFlag) {
  std::string error;
  ASSERT_TRUE(parse({"--data",
                     "x=a.npy,y=b.npy",
                     "--data=z=c.npy",
                     "--steps",
                     "12",
                     "--log-jsonl",
                     "log.jsonl",
                     "--eval-data",
                     "x=e.npy",
                     "--eval-every=4",
                     "--checkpoint-dir",
                     "ck",
                     "--checkpoint-every",
                     "3",
                     "--resume",
                     "--save-onnx",
                     "out.onnx",
                     "--weights",
                     "w.bin",
                     "--guard"},
                    error))
      << error;
  ASSERT_EQ(3u, options.data.size());
  EXPECT_EQ("y", options.data[1].input);
  EXPECT_EQ("b.npy", options.data[1].file);
  EXPECT_EQ("c.npy", options.data[2].file);
  EXPECT_EQ(12, options.steps);
  EXPECT_EQ("log.jsonl", options.logJsonl);
  EXPECT_EQ(4, options.evalEvery);
  EXPECT_EQ("ck", options.checkpointDir);
  EXPECT_EQ(3, options.checkpointEvery);
  EXPECT_TRUE(options.resume && options.guard);
  EXPECT_EQ("out.onnx", options.saveOnnx);
  EXPECT_EQ("w.bin", options.weights);
  EXPECT_TRUE(parse({"--help"}, error));
  EXPECT_TRUE(options.help);
}

TEST_F(OptionsTest, RejectsBadFlagsAndValues) {
  struct Case {
    std::vector<const char *> argv;
    const char *message;
  } cases[] = {
      {{"--steps", "3", "--bogus"}, "unknown flag '--bogus' (see --help)"},
      {{"--steps", "3", "stray"}, "unexpected argument 'stray'"},
      {{"--steps"}, "--steps needs a value"},
      {{"--steps", "-1"}, "--steps expects a non-negative integer, got '-1'"},
      {{"--steps", "3x"}, "--steps expects a non-negative integer, got '3x'"},
      {{"--steps", "2", "--checkpoint-every", "0", "--checkpoint-dir", "d"},
       "--checkpoint-every expects a positive integer, got '0'"},
      {{"--synthetic"}, "--steps N is required"},
      {{"--steps", "1", "--synthetic", "--data", "x=a.npy"},
       "--data and --synthetic contradict each other"},
      {{"--steps", "1", "--data", "x"}, "--data expects NAME=FILE.npy"},
      {{"--steps", "1", "--data", "x=a.npy,,y=b.npy"},
       "--data expects NAME=FILE.npy[,NAME=FILE.npy...], got ''"},
      {{"--steps", "1", "--data", "x=a.npy,x=b.npy"},
       "--data names input 'x' twice"},
      {{"--steps", "1", "--checkpoint-every", "2"},
       "--checkpoint-every needs --checkpoint-dir"},
      {{"--steps", "1", "--resume"}, "--resume needs --checkpoint-dir"},
      {{"--steps", "1", "--eval-every", "2"}, "--eval-every needs --eval-data"},
      {{"--steps", "1", "--guard=1"}, "--guard takes no value"},
      {{"--steps", "1", "--betas", "0.9,0.99"}, "--betas: this model has no"},
      {{"--steps", "1", "--eps", "1e-8"},
       "--eps: this model has no such hyperparameter"},
      {{"--steps", "1", "--no-decay", "bias"},
       "--no-decay is fixed when the model is compiled"},
      {{"--steps", "1", "--log-jsonl="}, "--log-jsonl needs a file name"},
  };
  for (const Case &c : cases) {
    std::string error;
    EXPECT_FALSE(parse(c.argv, error)) << c.message;
    EXPECT_NE(std::string::npos, error.find(c.message))
        << "got: " << error << "\nwant: " << c.message;
  }
}

TEST_F(OptionsTest, OverridesHyperparameters) {
  std::string error;
  ASSERT_TRUE(resolve({"--steps", "10", "--lr", "0.5", "--momentum=0.8",
                       "--weight-decay", "1e-4", "--seed", "-3", "--nesterov",
                       "--clip-norm", "1", "--min-lr", "0.01"},
                      error))
      << error;
  EXPECT_EQ(0.5, value("lr"));
  EXPECT_EQ(0.8, value("momentum"));
  EXPECT_EQ(1e-4, value("weight_decay"));
  EXPECT_EQ(-3, value("seed"));
  EXPECT_EQ(1, value("nesterov"));
  EXPECT_EQ(1, value("clip_norm"));
  EXPECT_EQ(0.01, value("min_lr"));
  EXPECT_TRUE(notes.empty());
  ASSERT_TRUE(resolve({"--steps", "1", "--nesterov=false"}, error)) << error;
  EXPECT_EQ(0, value("nesterov"));
  EXPECT_EQ(0.01, value("lr")); // the compiled-in default
  EXPECT_EQ(7, value("seed"));
}

TEST_F(OptionsTest, SchedulesRunOverTheStepsUnlessToldOtherwise) {
  std::string error;
  ASSERT_TRUE(resolve(
      {"--steps", "50", "--lr-schedule", "cosine", "--warmup", "5"}, error))
      << error;
  EXPECT_EQ(2, value("lr_schedule"));
  EXPECT_EQ(50, value("total_steps"));
  ASSERT_EQ(1u, notes.size());
  EXPECT_NE(std::string::npos, notes[0].find("cosine schedule runs over"));
  ASSERT_TRUE(resolve(
      {"--steps", "50", "--lr-schedule=linear", "--total-steps", "20"}, error))
      << error;
  EXPECT_EQ(1, value("lr_schedule"));
  EXPECT_EQ(20, value("total_steps"));
  EXPECT_TRUE(notes.empty());
  ASSERT_TRUE(resolve({"--steps", "5", "--lr-schedule", "constant"}, error));
  EXPECT_EQ(0, value("total_steps"));
}

TEST_F(OptionsTest, RejectsBadHyperparameterValues) {
  struct Case {
    std::vector<const char *> argv;
    const char *message;
  } cases[] = {
      {{"--lr", "-1"}, "--lr must not be negative, got -1"},
      {{"--lr", "fast"}, "--lr expects a number, got 'fast'"},
      {{"--lr", "nan"}, "--lr expects a number, got 'nan'"},
      {{"--dampening", "2"}, "--dampening must lie in [0, 1], got 2"},
      {{"--warmup", "1.5"}, "--warmup expects an integer, got '1.5'"},
      {{"--seed", "99999999999999999999"}, "--seed expects an integer"},
      {{"--lr-schedule", "step"},
       "--lr-schedule expects constant, linear or cosine, got 'step'"},
      {{"--nesterov=maybe"}, "--nesterov expects true or false, got 'maybe'"},
      {{"--nesterov", "--dampening", "0.1"},
       "--nesterov needs a positive --momentum and zero --dampening"},
      {{"--nesterov", "--momentum", "0"},
       "--nesterov needs a positive --momentum"},
      {{"--lr-schedule", "linear", "--warmup", "10", "--total-steps", "10"},
       "--warmup 10 leaves no steps to the linear schedule's --total-steps 10"},
  };
  for (const Case &c : cases) {
    std::vector<const char *> argv = {"--steps", "20"};
    argv.insert(argv.end(), c.argv.begin(), c.argv.end());
    std::string error;
    EXPECT_FALSE(resolve(argv, error)) << c.message;
    EXPECT_NE(std::string::npos, error.find(c.message))
        << "got: " << error << "\nwant: " << c.message;
  }
}

TEST_F(OptionsTest, StoresValuesByDType) {
  std::string error;
  ASSERT_TRUE(resolve({"--steps", "1", "--seed", "9007199254740993"}, error));
  for (const HyperValue &h : hypers) {
    if (h.name != "seed")
      continue;
    int64_t stored = 0;
    h.store(&stored);
    EXPECT_EQ(int64_t(9007199254740993), stored); // exact past 2^53
  }
}

TEST_F(OptionsTest, UsageListsInputsAndHyperparameters) {
  std::string usage = trainUsage(info);
  EXPECT_NE(std::string::npos, usage.find("x: float32 samples of shape [2]"));
  EXPECT_NE(std::string::npos, usage.find("--lr VALUE  [0.01]"));
  EXPECT_NE(std::string::npos,
            usage.find("--lr-schedule NAME (constant|linear|cosine)  "
                       "[constant]"));
  EXPECT_NE(std::string::npos, usage.find("--nesterov[=BOOL]  [0]"));
  EXPECT_EQ(std::string::npos, usage.find("--betas"));
}

} // namespace
