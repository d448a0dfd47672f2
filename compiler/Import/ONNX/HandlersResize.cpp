//===- HandlersResize.cpp - ONNX Resize -> dtg ----------------------------===//
//
// Resize (opsets 11 to 19: every mode, coordinate transformation, nearest
// mode, cubic coefficient, exclude_outside, extrapolation, antialias, axes
// and keep_aspect_ratio_policy) is separable: along each resized axis the
// result is y = W x + b, W an [out, in] matrix of interpolation weights and
// b the extrapolation value where tf_crop_and_resize samples outside the
// input. Shapes are static, so W is computed here, as ONNX's reference
// evaluator defines the weights, and the op becomes a matmul along the axis
// (or, for nearest, a gather, which keeps integers and is exact). Their
// gradients are the existing ones.
//
//===----------------------------------------------------------------------===//

#include "compiler/Import/ONNX/HandlersShape.h"
#include "compiler/Import/ONNX/NodeImporter.h"

#include "dialects/DTG/IR/DTGOps.h"

#include "llvm/ADT/StringExtras.h"

#include <cmath>

using namespace mlir;
using namespace mlir::dtc;
using namespace mlir::dtc::onnx_import;
using namespace mlir::dtc::onnx_import::shape;
using dtg::interp::Tensor;

namespace {

RankedTensorType typeOf(Value value) { return NodeImporter::typeOf(value); }

/// The attributes that decide the weights of one axis.
struct ResizeMode {
  std::string mode, coordinates, nearest;
  double cubicA = -0.75, extrapolation = 0;
  bool excludeOutside = false, antialias = false;
};

/// Interpolation weights of one axis: W [out, in] row-major, and b [out].
struct AxisWeights {
  std::vector<double> w, b;
  bool identity = true, oneHot = true, biased = false;
};

/// The source coordinate of output position `x` along an axis of `in`
/// elements resized to `out` (`outExact` = scale * in before rounding);
/// nullopt outside the crop of tf_crop_and_resize.
std::optional<double> sourceCoordinate(const ResizeMode &m, int64_t x,
                                       int64_t in, int64_t out, double outExact,
                                       double scale, double roiStart,
                                       double roiEnd) {
  const std::string &c = m.coordinates;
  if (c == "align_corners")
    return outExact == 1 ? 0.0 : x * double(in - 1) / (outExact - 1);
  if (c == "asymmetric")
    return x / scale;
  if (c == "tf_half_pixel_for_nn") // opsets 11-12
    return (x + 0.5) / scale;
  if (c == "tf_crop_and_resize") {
    double source = outExact == 1
                        ? (roiEnd - roiStart) * (in - 1) / 2
                        : x * (roiEnd - roiStart) * (in - 1) / (outExact - 1);
    source += roiStart * (in - 1);
    if (source < 0 || source > in - 1)
      return std::nullopt;
    return source;
  }
  if (c == "pytorch_half_pixel")
    return outExact == 1 ? -0.5 : (x + 0.5) / scale - 0.5;
  if (c == "half_pixel_symmetric") {
    double adjustment = out / outExact;
    double center = in / 2.0;
    return center * (1 - adjustment) + (x + 0.5) / scale - 0.5;
  }
  return (x + 0.5) / scale - 0.5; // half_pixel
}

/// The coefficients of the taps base - (n/2 - 1) .. base + n/2 around a
/// source coordinate base + ratio, ratio in (0, 1].
std::vector<double> tapCoefficients(const ResizeMode &m, double ratio,
                                    double scale) {
  if (m.mode == "nearest") {
    bool integer = ratio == 1;
    if (integer)
      return {0, 1};
    const std::string &k = m.nearest;
    bool upper = k == "round_prefer_ceil" ? ratio >= 0.5
                 : k == "floor"           ? false
                 : k == "ceil"            ? true
                                          : ratio > 0.5;
    return {upper ? 0.0 : 1.0, upper ? 1.0 : 0.0};
  }
  double a = m.cubicA;
  auto cubic = [a](double x) {
    x = std::abs(x);
    if (x <= 1)
      return ((a + 2) * x - (a + 3)) * x * x + 1;
    if (x < 2)
      return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a;
    return 0.0;
  };
  if (!m.antialias || scale >= 1) {
    if (m.mode == "linear")
      return {1 - ratio, ratio};
    return {cubic(ratio + 1), cubic(ratio), cubic(1 - ratio), cubic(2 - ratio)};
  }
  // Antialias when downsampling: the filter stretched by 1 / scale.
  double support = m.mode == "linear" ? 1 : 2;
  auto start = static_cast<int64_t>(std::floor(-support / scale) + 1);
  std::vector<double> coefficients;
  double sum = 0;
  for (int64_t i = start; i < 2 - start; ++i) {
    double t = scale * (i - ratio);
    double c =
        m.mode == "linear" ? std::clamp(1 - std::abs(t), 0.0, 1.0) : cubic(t);
    coefficients.push_back(c);
    sum += c;
  }
  for (double &c : coefficients)
    c /= sum;
  return coefficients;
}

AxisWeights axisWeights(const ResizeMode &m, int64_t in, int64_t out,
                        double scale, double roiStart, double roiEnd) {
  AxisWeights a;
  a.w.assign(out * in, 0.0);
  a.b.assign(out, 0.0);
  double outExact = scale * in;
  for (int64_t x = 0; x < out; ++x) {
    std::optional<double> source =
        sourceCoordinate(m, x, in, out, outExact, scale, roiStart, roiEnd);
    if (!source) {
      a.b[x] = m.extrapolation;
      a.biased |= m.extrapolation != 0;
      a.identity = false;
      continue;
    }
    double base = std::ceil(*source) - 1, ratio = *source - base;
    std::vector<double> c = tapCoefficients(m, ratio, scale);
    auto taps = static_cast<int64_t>(c.size());
    int64_t first = static_cast<int64_t>(base) - (taps / 2 - 1);
    if (m.excludeOutside) {
      double sum = 0;
      for (int64_t t = 0; t < taps; ++t) {
        if (first + t < 0 || first + t >= in)
          c[t] = 0;
        sum += c[t];
      }
      for (double &v : c)
        v = sum == 0 ? 0 : v / sum;
    }
    for (int64_t t = 0; t < taps; ++t) {
      // Taps outside the input take the edge's value.
      int64_t i = std::clamp<int64_t>(first + t, 0, in - 1);
      a.w[x * in + i] += c[t];
    }
    int64_t nonzero = 0;
    for (int64_t i = 0; i < in; ++i) {
      double v = a.w[x * in + i];
      nonzero += v != 0;
      a.oneHot &= v == 0 || v == 1;
      a.identity &= v == (x == i ? 1.0 : 0.0);
    }
    a.oneHot &= nonzero == 1;
  }
  a.identity &= in == out;
  return a;
}

/// Float values of constant input `i` (roi, scales); empty if absent or
/// empty.
FailureOr<SmallVector<double>> constantFloats(NodeImporter &n, unsigned i) {
  SmallVector<double> values;
  if (!n.hasInput(i))
    return values;
  FailureOr<Tensor> t = n.constantInput(i);
  if (failed(t))
    return failure();
  for (int64_t k = 0, e = t->numElements(); k < e; ++k)
    values.push_back(t->get(k));
  return values;
}

/// y = W x + b along `axis` of `x`.
FailureOr<Value> applyAxis(NodeImporter &n, Value x, int64_t axis,
                           const AxisWeights &a, int64_t out) {
  auto type = typeOf(x);
  int64_t rank = type.getRank(), in = type.getDimSize(axis);
  if (a.oneHot && !a.biased) {
    // A gather: each output row copies one input row.
    SmallVector<int64_t> indices;
    for (int64_t o = 0; o < out; ++o)
      for (int64_t i = 0; i < in; ++i)
        if (a.w[o * in + i] == 1)
          indices.push_back(i);
    if (static_cast<int64_t>(indices.size()) == out)
      return n.make<dtg::GatherOp>({x, intConstant(n, indices, {out})},
                                   n.i64Attr("axis", axis));
  }
  Type element = type.getElementType();
  if (!isa<FloatType>(element))
    return n.unsupported("mode '" + n.getString("mode", "nearest") + "' on " +
                         Twine(rank) + "-D integer data");
  // The axis last, times W^T [in, out], then back.
  SmallVector<int64_t> perm, inverse(rank);
  for (int64_t d = 0; d < rank; ++d)
    if (d != axis)
      perm.push_back(d);
  perm.push_back(axis);
  for (int64_t d = 0; d < rank; ++d)
    inverse[perm[d]] = d;
  Value moved = x;
  if (axis != rank - 1) {
    FailureOr<Value> t =
        n.make<dtg::TransposeOp>(x, n.i64ArrayAttr("perm", perm));
    if (failed(t))
      return failure();
    moved = *t;
  }
  Tensor weights = Tensor::zeros(element, {in, out});
  for (int64_t o = 0; o < out; ++o)
    for (int64_t i = 0; i < in; ++i)
      weights.set(i * out + o, a.w[o * in + i]);
  FailureOr<Value> y = n.make<dtg::MatMulOp>({moved, n.constant(weights)});
  if (failed(y))
    return failure();
  if (a.biased) {
    Tensor bias = Tensor::zeros(element, {out});
    for (int64_t o = 0; o < out; ++o)
      bias.set(o, a.b[o]);
    y = n.make<dtg::AddOp>({*y, n.constant(bias)});
    if (failed(y))
      return failure();
  }
  if (axis == rank - 1)
    return y;
  return n.make<dtg::TransposeOp>(*y, n.i64ArrayAttr("perm", inverse));
}

LogicalResult importResize(NodeImporter &n) {
  FailureOr<Value> x = n.input(0);
  if (failed(x))
    return failure();
  auto type = typeOf(*x);
  ArrayRef<int64_t> shape = type.getShape();
  int64_t rank = type.getRank();

  ResizeMode m;
  m.mode = n.getString("mode", "nearest");
  m.coordinates = n.getString("coordinate_transformation_mode", "half_pixel");
  m.nearest = n.getString("nearest_mode", "round_prefer_floor");
  m.cubicA = n.getFloat("cubic_coeff_a", -0.75);
  m.extrapolation = n.getFloat("extrapolation_value", 0);
  m.excludeOutside = n.getInt("exclude_outside", 0) != 0;
  m.antialias = n.getInt("antialias", 0) != 0;
  std::string policy = n.getString("keep_aspect_ratio_policy", "stretch");
  auto oneOf = [&](StringRef what, StringRef value,
                   ArrayRef<StringRef> known) -> LogicalResult {
    if (llvm::is_contained(known, value))
      return success();
    return n.fail("attribute '" + what + "' = '" + value + "' is not one of " +
                  llvm::join(known, ", "));
  };
  SmallVector<StringRef> coordinates{"half_pixel", "pytorch_half_pixel",
                                     "align_corners", "asymmetric",
                                     "tf_crop_and_resize"};
  if (n.opset >= 19)
    coordinates.push_back("half_pixel_symmetric");
  // Removed at opset 13; models upgraded from 11 keep it.
  coordinates.push_back("tf_half_pixel_for_nn");
  if (failed(oneOf("mode", m.mode, {"nearest", "linear", "cubic"})) ||
      failed(oneOf("coordinate_transformation_mode", m.coordinates,
                   coordinates)) ||
      failed(oneOf(
          "nearest_mode", m.nearest,
          {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"})) ||
      failed(oneOf("keep_aspect_ratio_policy", policy,
                   {"stretch", "not_larger", "not_smaller"})))
    return failure();
  if (m.antialias && m.mode == "nearest")
    return n.fail("attribute 'antialias' needs mode linear or cubic");

  // The resized axes (opset 18), all by default.
  SmallVector<int64_t> axes;
  if (std::optional<SmallVector<int64_t>> given = n.getInts("axes")) {
    for (int64_t a : *given) {
      FailureOr<int64_t> axis = n.normalizeAxis(a, rank, "attribute 'axes'");
      if (failed(axis))
        return failure();
      if (llvm::is_contained(axes, *axis))
        return n.fail("attribute 'axes' repeats axis " + Twine(a));
      axes.push_back(*axis);
    }
  } else {
    for (int64_t d = 0; d < rank; ++d)
      axes.push_back(d);
  }
  auto count = static_cast<int64_t>(axes.size());

  FailureOr<SmallVector<double>> roi = constantFloats(n, 1),
                                 scales = constantFloats(n, 2);
  if (failed(roi) || failed(scales))
    return failure();
  SmallVector<int64_t> sizes;
  if (n.hasInput(3)) {
    FailureOr<SmallVector<int64_t>> given = n.constantInts(3);
    if (failed(given))
      return failure();
    sizes = *given;
  }
  if (scales->empty() == sizes.empty())
    return n.fail("needs exactly one of inputs 'scales' and 'sizes'");
  if (!scales->empty() && static_cast<int64_t>(scales->size()) != count)
    return n.fail("input 'scales' has " + Twine(scales->size()) +
                  " values for " + Twine(count) + " axes");
  if (!sizes.empty() && static_cast<int64_t>(sizes.size()) != count)
    return n.fail("input 'sizes' has " + Twine(sizes.size()) + " values for " +
                  Twine(count) + " axes");
  bool crop = m.coordinates == "tf_crop_and_resize";
  if (crop && static_cast<int64_t>(roi->size()) != 2 * count)
    return n.fail("input 'roi' needs " + Twine(2 * count) +
                  " values for tf_crop_and_resize, has " + Twine(roi->size()));

  SmallVector<double> scale(rank, 1.0);
  SmallVector<int64_t> out(shape);
  if (!scales->empty()) {
    for (auto [i, axis] : llvm::enumerate(axes)) {
      double s = (*scales)[i];
      if (!(s > 0))
        return n.fail("input 'scales' has the non-positive scale " +
                      std::to_string(s));
      scale[axis] = s;
      out[axis] = static_cast<int64_t>(s * shape[axis]);
    }
  } else {
    for (auto [i, axis] : llvm::enumerate(axes)) {
      if (sizes[i] <= 0)
        return n.fail("input 'sizes' has the non-positive size " +
                      Twine(sizes[i]));
      if (shape[axis] == 0)
        return n.fail("cannot resize the empty axis " + Twine(axis));
      scale[axis] = double(sizes[i]) / shape[axis];
      out[axis] = sizes[i];
    }
    if (policy != "stretch") {
      double s = scale[axes.front()];
      for (int64_t axis : axes)
        s = policy == "not_larger" ? std::min(s, scale[axis])
                                   : std::max(s, scale[axis]);
      for (int64_t axis : axes) {
        scale[axis] = s;
        out[axis] = static_cast<int64_t>(s * shape[axis] + 0.5);
      }
    }
  }
  if (exceedsElementLimit(out))
    return n.fail("the result " + listText(out) +
                  " is larger than dtc supports (2^31 elements)");

  Value y = *x;
  for (auto [i, axis] : llvm::enumerate(axes)) {
    if (out[axis] == 0 || shape[axis] == 0)
      return n.unsupported("resizing axis " + Twine(axis) + " from " +
                           Twine(shape[axis]) + " to " + Twine(out[axis]));
    double roiStart = crop ? (*roi)[i] : 0,
           roiEnd = crop ? (*roi)[count + i] : 1;
    AxisWeights a =
        axisWeights(m, shape[axis], out[axis], scale[axis], roiStart, roiEnd);
    if (a.identity && !a.biased)
      continue;
    FailureOr<Value> next = applyAxis(n, y, axis, a, out[axis]);
    if (failed(next))
      return failure();
    y = *next;
  }
  return n.setOutput(0, y);
}

} // namespace

void mlir::dtc::onnx_import::registerResizeHandlers(HandlerRegistry &registry) {
  registry.add("Resize", 11, importResize);
}
