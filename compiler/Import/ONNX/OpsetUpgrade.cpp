//===- OpsetUpgrade.cpp - lift an old ONNX model in a child process -------===//
//
// The child (runInChild) runs libonnx and answers with one tag byte and a
// payload: 'M' and the upgraded model, or 'E' and libonnx's exception
// message. A child that dies instead is reported with its signal, one that
// runs too long as such. Nothing but libonnx and protobuf runs in it.
//
//===----------------------------------------------------------------------===//

#include "compiler/Import/ONNX/OpsetUpgrade.h"
#include "compiler/Support/ChildProcess.h"

#include <google/protobuf/io/coded_stream.h>
#include <onnx/defs/schema.h>
#include <onnx/shape_inference/implementation.h>
#include <onnx/version_converter/convert.h>

#include <climits>
#include <cstring>

using namespace mlir::dtc;

namespace {
constexpr char kModelTag = 'M';
constexpr char kErrorTag = 'E';
/// How long the child may take (a large model's upgrade takes seconds).
constexpr unsigned kSecondsAllowed = 600;
} // namespace

/// libonnx's work: shape inference (its own failures are not fatal: what it
/// could not type, the converter reports if it needs it), then conversion.
/// Returns the tag and payload for the parent.
static std::string upgradeInProcess(onnx::ModelProto &model, int64_t opset) {
  try {
    // Some adapters (Softmax 12 -> 13 among them) need their operand's
    // rank, which older exporters left for shape inference to find.
    onnx::ShapeInferenceOptions inference;
    inference.check_type = false;
    inference.error_mode = 0;
    onnx::shape_inference::InferShapes(
        model, onnx::OpSchemaRegistry::Instance(), inference);
  } catch (...) {
  }
  try {
    onnx::ModelProto upgraded =
        onnx::version_conversion::ConvertVersion(model, opset);
    std::string answer(1, kModelTag);
    if (!upgraded.AppendToString(&answer))
      return std::string(1, kErrorTag) +
             "the upgraded model does not serialize (larger than 2 GiB?)";
    return answer;
  } catch (const std::exception &e) {
    return std::string(1, kErrorTag) + e.what();
  } catch (...) {
    return std::string(1, kErrorTag) + "unknown error";
  }
}

std::optional<std::string> onnx_import::upgradeOpset(onnx::ModelProto &model,
                                                     int64_t opset) {
  ChildOutcome child = runInChild(
      [&] { return upgradeInProcess(model, opset); }, kSecondsAllowed,
      /*quietCrashes=*/true);
  if (!child.error.empty())
    return "cannot run libonnx's converter in a child process: " + child.error;
  if (child.timedOut)
    return "libonnx's shape inference and converter did not finish in " +
           std::to_string(kSecondsAllowed) + " s";
  if (child.signal)
    return std::string("libonnx crashed on the model (") +
           ::strsignal(child.signal) +
           "); its declared shapes may not fit its ops (check it with "
           "onnx.checker.check_model(model, full_check=True))";
  const std::string &answer = child.output;
  if (!child.finished() || answer.empty())
    return std::string("libonnx's converter stopped without an answer");
  if (answer.front() == kErrorTag)
    return answer.substr(1);

  model.Clear();
  google::protobuf::io::CodedInputStream stream(
      reinterpret_cast<const uint8_t *>(answer.data()) + 1,
      static_cast<int>(answer.size() - 1));
  stream.SetTotalBytesLimit(INT_MAX);
  if (answer.front() != kModelTag || !model.ParseFromCodedStream(&stream))
    return std::string("libonnx's converter answered with a broken model");
  return std::nullopt;
}
