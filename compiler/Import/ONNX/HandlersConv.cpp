//===- HandlersConv.cpp - ONNX convolution and pooling ops -> dtg --------===//
//
// Conv, ConvTranspose (as a convolution of the zero-stuffed input with the
// flipped, transposed weight), MaxPool, AveragePool, LpPool and the global
// poolings. The window attributes (kernel_shape, strides, dilations, pads,
// auto_pad) are read by one helper, so every op resolves auto_pad alike.
//
//===----------------------------------------------------------------------===//

#include "compiler/Import/ONNX/HandlersNN.h"

#include "dialects/DTG/IR/DTGOps.h"

#include "llvm/ADT/STLExtras.h"

using namespace mlir;
using namespace mlir::dtc;
using namespace mlir::dtc::onnx_import;

namespace {

RankedTensorType typeOf(Value value) { return NodeImporter::typeOf(value); }

std::string listText(ArrayRef<int64_t> values) {
  std::string s = "[";
  for (auto [i, v] : llvm::enumerate(values))
    s += (i ? "," : "") + std::to_string(v);
  return s + "]";
}

/// The number of taps of a window (in double: it cannot overflow).
double windowSize(ArrayRef<int64_t> kernel) {
  double p = 1;
  for (int64_t v : kernel)
    p *= static_cast<double>(v);
  return p;
}

/// Largest window attribute value (kernel size, stride, dilation, pad)
/// accepted, so that window arithmetic never overflows.
constexpr int64_t kMaxWindowValue = int64_t(1) << 24;

/// The INTS attribute `name` with `count` entries, each in [minValue,
/// kMaxWindowValue]; `count` copies of `defaultValue` when absent (or empty).
FailureOr<SmallVector<int64_t>> readInts(NodeImporter &n, StringRef name,
                                         size_t count, int64_t defaultValue,
                                         int64_t minValue) {
  std::optional<SmallVector<int64_t>> given = n.getInts(name);
  if (!given || given->empty())
    return SmallVector<int64_t>(count, defaultValue);
  if (given->size() != count)
    return n.fail("attribute '" + name + "' has " + Twine(given->size()) +
                  " entries, expected " + Twine(count));
  for (int64_t v : *given)
    if (v < minValue || v > kMaxWindowValue)
      return n.fail("attribute '" + name + "' = " + listText(*given) +
                    " must hold values in [" + Twine(minValue) + ", 2^24]");
  return *given;
}

/// The window of a convolution or pooling node over spatial sizes.
struct Window {
  SmallVector<int64_t> kernel, strides, dilations;
  /// The k leading pads, then the k trailing ones (ONNX order).
  SmallVector<int64_t> pads;
  std::string autoPad;
};

/// Reads kernel_shape (or takes `weightKernel`), strides, dilations, pads and
/// auto_pad over input spatial sizes `spatial`. With `resolveAutoPad`,
/// SAME_UPPER and SAME_LOWER become explicit pads as Conv and the poolings
/// define them (ConvTranspose resolves them itself).
FailureOr<Window> readWindow(NodeImporter &n, ArrayRef<int64_t> spatial,
                             ArrayRef<int64_t> weightKernel,
                             bool resolveAutoPad = true) {
  size_t k = spatial.size();
  Window w;
  std::optional<SmallVector<int64_t>> kernel = n.getInts("kernel_shape");
  if (kernel && !kernel->empty()) {
    FailureOr<SmallVector<int64_t>> read = readInts(n, "kernel_shape", k, 1, 1);
    if (failed(read))
      return failure();
    if (!weightKernel.empty() && ArrayRef<int64_t>(*read) != weightKernel)
      return n.fail("attribute 'kernel_shape' = " + listText(*read) +
                    " does not match the weight's spatial shape " +
                    listText(weightKernel));
    w.kernel = std::move(*read);
  } else if (!weightKernel.empty()) {
    w.kernel.assign(weightKernel.begin(), weightKernel.end());
  } else {
    return n.fail("attribute 'kernel_shape' is missing");
  }
  FailureOr<SmallVector<int64_t>> strides = readInts(n, "strides", k, 1, 1);
  FailureOr<SmallVector<int64_t>> dilations = readInts(n, "dilations", k, 1, 1);
  if (failed(strides) || failed(dilations))
    return failure();
  w.strides = std::move(*strides);
  w.dilations = std::move(*dilations);
  FailureOr<SmallVector<int64_t>> pads = readInts(n, "pads", 2 * k, 0, 0);
  if (failed(pads))
    return failure();
  w.pads = std::move(*pads);

  w.autoPad = n.getString("auto_pad", "NOTSET");
  if (w.autoPad == "NOTSET")
    return w;
  if (w.autoPad != "VALID" && w.autoPad != "SAME_UPPER" &&
      w.autoPad != "SAME_LOWER")
    return n.fail("attribute 'auto_pad' has unknown value '" + w.autoPad + "'");
  if (llvm::any_of(w.pads, [](int64_t p) { return p != 0; }))
    return n.fail("attribute 'pads' cannot be used with auto_pad = " +
                  w.autoPad);
  if (w.autoPad == "VALID" || !resolveAutoPad)
    return w;
  for (size_t d = 0; d < k; ++d) {
    int64_t out = (spatial[d] + w.strides[d] - 1) / w.strides[d];
    int64_t extent = (w.kernel[d] - 1) * w.dilations[d] + 1;
    int64_t total =
        std::max<int64_t>(0, (out - 1) * w.strides[d] + extent - spatial[d]);
    int64_t small = total / 2, large = total - small;
    w.pads[d] = w.autoPad == "SAME_UPPER" ? small : large;
    w.pads[k + d] = total - w.pads[d];
  }
  return w;
}

/// The window attributes of dtg.conv and the pooling ops.
SmallVector<NamedAttribute> windowAttrs(NodeImporter &n, const Window &w,
                                        bool withKernel) {
  SmallVector<NamedAttribute> attrs;
  if (withKernel)
    attrs.push_back(n.i64ArrayAttr("kernel", w.kernel));
  attrs.push_back(n.i64ArrayAttr("strides", w.strides));
  attrs.push_back(n.i64ArrayAttr("pads", w.pads));
  attrs.push_back(n.i64ArrayAttr("dilations", w.dilations));
  return attrs;
}

/// Checks that X is [N, C, D...] and W has its rank; returns X's type.
FailureOr<RankedTensorType> checkConvOperands(NodeImporter &n, Value x,
                                              Value w) {
  auto xType = typeOf(x), wType = typeOf(w);
  if (xType.getRank() < 3)
    return n.fail("input X must have rank at least 3 ([N, C, D...]), got " +
                  Twine(xType.getRank()));
  if (wType.getRank() != xType.getRank())
    return n.fail("weight W has rank " + Twine(wType.getRank()) +
                  ", expected the rank of X (" + Twine(xType.getRank()) + ")");
  return xType;
}

/// Appends the optional bias input (#2) to `operands`.
LogicalResult addBias(NodeImporter &n, SmallVectorImpl<Value> &operands) {
  if (!n.hasInput(2))
    return success();
  FailureOr<Value> b = n.input(2);
  if (failed(b))
    return failure();
  operands.push_back(*b);
  return success();
}

//===----------------------------------------------------------------------===//
// Convolution
//===----------------------------------------------------------------------===//

LogicalResult importConv(NodeImporter &n) {
  FailureOr<Value> x = n.input(0), w = n.input(1);
  if (failed(x) || failed(w))
    return failure();
  FailureOr<RankedTensorType> xType = checkConvOperands(n, *x, *w);
  if (failed(xType))
    return failure();
  FailureOr<Window> window = readWindow(n, xType->getShape().drop_front(2),
                                        typeOf(*w).getShape().drop_front(2));
  if (failed(window))
    return failure();
  int64_t group = n.getInt("group", 1);
  if (group <= 0)
    return n.fail("attribute 'group' must be positive, got " + Twine(group));
  SmallVector<Value> operands{*x, *w};
  if (failed(addBias(n, operands)))
    return failure();
  SmallVector<NamedAttribute> attrs = windowAttrs(n, *window, false);
  attrs.push_back(n.i64Attr("group", group));
  FailureOr<Value> y = n.make<dtg::ConvOp>(operands, attrs);
  if (failed(y))
    return failure();
  return n.setOutput(0, *y);
}

/// ConvTranspose as a convolution: the input with stride - 1 zeros between
/// elements, padded by dilation * (kernel - 1) minus the node's pads (a crop
/// where negative), convolved at stride 1 with the weight transposed to
/// [M, C/group, K...] and flipped in every spatial dimension.
LogicalResult importConvTranspose(NodeImporter &n) {
  FailureOr<Value> x = n.input(0), w = n.input(1);
  if (failed(x) || failed(w))
    return failure();
  FailureOr<RankedTensorType> xTypeOr = checkConvOperands(n, *x, *w);
  if (failed(xTypeOr))
    return failure();
  RankedTensorType xType = *xTypeOr, wType = typeOf(*w);
  int64_t rank = xType.getRank(), k = rank - 2;
  int64_t channels = xType.getDimSize(1);
  int64_t group = n.getInt("group", 1);
  if (group <= 0)
    return n.fail("attribute 'group' must be positive, got " + Twine(group));
  if (channels % group != 0 || wType.getDimSize(0) != channels)
    return n.fail("weight W " + listText(wType.getShape()) +
                  " does not fit input channels " + Twine(channels) +
                  " in group " + Twine(group) +
                  " (expected [C, M/group, K...])");
  ArrayRef<int64_t> spatial = xType.getShape().drop_front(2);
  ArrayRef<int64_t> kernelShape = wType.getShape().drop_front(2);
  FailureOr<Window> window =
      readWindow(n, spatial, kernelShape, /*resolveAutoPad=*/false);
  if (failed(window))
    return failure();
  StringRef autoPad = window->autoPad;
  FailureOr<SmallVector<int64_t>> outputPadding =
      readInts(n, "output_padding", k, 0, 0);
  if (failed(outputPadding))
    return failure();

  SmallVector<int64_t> full(k), begin(k), end(k);
  for (int64_t d = 0; d < k; ++d)
    full[d] = window->strides[d] * (spatial[d] - 1) + (*outputPadding)[d] +
              (kernelShape[d] - 1) * window->dilations[d] + 1;
  std::optional<SmallVector<int64_t>> outputShape = n.getInts("output_shape");
  if (outputShape && !outputShape->empty()) {
    if (static_cast<int64_t>(outputShape->size()) == rank)
      outputShape->erase(outputShape->begin(), outputShape->begin() + 2);
    if (static_cast<int64_t>(outputShape->size()) != k)
      return n.fail("attribute 'output_shape' has " +
                    Twine(outputShape->size()) + " entries, expected " +
                    Twine(k));
    for (int64_t size : *outputShape)
      if (size < 1 || size > kMaxTensorElements)
        return n.fail("attribute 'output_shape' = " + listText(*outputShape) +
                      " must hold sizes in [1, 2^31]");
  } else if (autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER") {
    outputShape.emplace();
    for (int64_t d = 0; d < k; ++d)
      outputShape->push_back(spatial[d] * window->strides[d]);
  } else {
    outputShape.reset();
  }
  for (int64_t d = 0; d < k; ++d) {
    if (!outputShape) {
      begin[d] = window->pads[d];
      end[d] = window->pads[k + d];
      continue;
    }
    int64_t total = full[d] - (*outputShape)[d];
    if (total < 0) {
      // A larger output than the full result: the extra positions see only
      // zeros (and the bias), at the end.
      begin[d] = 0;
      end[d] = total;
    } else if (autoPad == "SAME_UPPER") {
      begin[d] = total / 2;
      end[d] = total - begin[d];
    } else {
      end[d] = total / 2;
      begin[d] = total - end[d];
    }
  }
  for (int64_t d = 0; d < k; ++d)
    if (full[d] - begin[d] - end[d] <= 0)
      return n.fail("output would be empty in spatial dimension " + Twine(d));

  // Zero-stuff the input: [N, C, D1, 1, D2, 1, ...] padded to strides, then
  // merged, leaves stride - 1 zeros after each element.
  Value stuffed = *x;
  if (llvm::any_of(window->strides, [](int64_t s) { return s > 1; })) {
    SmallVector<int64_t> split(xType.getShape().take_front(2));
    SmallVector<int64_t> low(2 + 2 * k, 0), high(2 + 2 * k, 0);
    SmallVector<int64_t> merged(xType.getShape().take_front(2));
    for (int64_t d = 0; d < k; ++d) {
      split.push_back(spatial[d]);
      split.push_back(1);
      high[2 + 2 * d + 1] = window->strides[d] - 1;
      merged.push_back(spatial[d] * window->strides[d]);
    }
    FailureOr<Value> v = n.reshape(stuffed, split);
    if (failed(v))
      return failure();
    v = n.make<dtg::PadOp>(
        *v, {n.i64ArrayAttr("low", low), n.i64ArrayAttr("high", high),
             n.strAttr("mode", "constant"), n.f64Attr("value", 0.0)});
    if (failed(v))
      return failure();
    v = n.reshape(*v, merged);
    if (failed(v))
      return failure();
    stuffed = *v;
  }
  SmallVector<int64_t> low(rank, 0), high(rank, 0);
  for (int64_t d = 0; d < k; ++d) {
    int64_t reach = (kernelShape[d] - 1) * window->dilations[d];
    low[2 + d] = reach - begin[d];
    high[2 + d] =
        reach - end[d] + (*outputPadding)[d] - (window->strides[d] - 1);
  }
  if (llvm::any_of(low, [](int64_t p) { return p != 0; }) ||
      llvm::any_of(high, [](int64_t p) { return p != 0; })) {
    FailureOr<Value> v = n.make<dtg::PadOp>(
        stuffed, {n.i64ArrayAttr("low", low), n.i64ArrayAttr("high", high),
                  n.strAttr("mode", "constant"), n.f64Attr("value", 0.0)});
    if (failed(v))
      return failure();
    stuffed = *v;
  }

  // Weight [C, M/g, K...] -> [g, C/g, M/g, K...] -> [g, M/g, C/g, K...] ->
  // [M, C/g, K...], flipped.
  int64_t perGroupIn = channels / group, perGroupOut = wType.getDimSize(1);
  SmallVector<int64_t> grouped{group, perGroupIn, perGroupOut};
  llvm::append_range(grouped, kernelShape);
  FailureOr<Value> weight = n.reshape(*w, grouped);
  if (failed(weight))
    return failure();
  SmallVector<int64_t> perm{0, 2, 1};
  for (int64_t d = 0; d < k; ++d)
    perm.push_back(3 + d);
  weight = n.make<dtg::TransposeOp>(*weight, n.i64ArrayAttr("perm", perm));
  if (failed(weight))
    return failure();
  SmallVector<int64_t> convShape{group * perGroupOut, perGroupIn};
  llvm::append_range(convShape, kernelShape);
  weight = n.reshape(*weight, convShape);
  if (failed(weight))
    return failure();
  SmallVector<int64_t> starts(rank, 0), limits(convShape), steps(rank, 1);
  for (int64_t d = 0; d < k; ++d) {
    starts[2 + d] = kernelShape[d] - 1;
    limits[2 + d] = -1;
    steps[2 + d] = -1;
  }
  weight = n.make<dtg::SliceOp>(*weight, {n.i64ArrayAttr("starts", starts),
                                          n.i64ArrayAttr("limits", limits),
                                          n.i64ArrayAttr("steps", steps)});
  if (failed(weight))
    return failure();

  SmallVector<Value> operands{stuffed, *weight};
  if (failed(addBias(n, operands)))
    return failure();
  FailureOr<Value> y = n.make<dtg::ConvOp>(
      operands, {n.i64ArrayAttr("strides", SmallVector<int64_t>(k, 1)),
                 n.i64ArrayAttr("pads", SmallVector<int64_t>(2 * k, 0)),
                 n.i64ArrayAttr("dilations", window->dilations),
                 n.i64Attr("group", group)});
  if (failed(y))
    return failure();
  return n.setOutput(0, *y);
}

//===----------------------------------------------------------------------===//
// Pooling
//===----------------------------------------------------------------------===//

/// The input of a pooling node, [N, C, D...].
FailureOr<Value> poolInput(NodeImporter &n) {
  FailureOr<Value> x = n.input(0);
  if (failed(x))
    return failure();
  if (typeOf(*x).getRank() < 3)
    return n.fail("input X must have rank at least 3 ([N, C, D...]), got " +
                  Twine(typeOf(*x).getRank()));
  return x;
}

/// Reads ceil_mode (0 or 1).
FailureOr<bool> readCeilMode(NodeImporter &n) {
  int64_t ceilMode = n.getInt("ceil_mode", 0);
  if (ceilMode != 0 && ceilMode != 1)
    return n.fail("attribute 'ceil_mode' must be 0 or 1, got " +
                  Twine(ceilMode));
  return ceilMode == 1;
}

LogicalResult importMaxPool(NodeImporter &n) {
  FailureOr<Value> x = poolInput(n);
  if (failed(x))
    return failure();
  if (n.hasOutput(1))
    return n.unsupported("output 'Indices'");
  // storage_order only orders the Indices output.
  int64_t storageOrder = n.getInt("storage_order", 0);
  if (storageOrder != 0 && storageOrder != 1)
    return n.fail("attribute 'storage_order' must be 0 or 1, got " +
                  Twine(storageOrder));
  auto type = typeOf(*x);
  FailureOr<Window> window = readWindow(n, type.getShape().drop_front(2), {});
  FailureOr<bool> ceilMode = readCeilMode(n);
  if (failed(window) || failed(ceilMode))
    return failure();
  // 8-bit integers pool exactly in f32.
  Type elementType = type.getElementType();
  Value operand = *x;
  if (auto intType = dyn_cast<IntegerType>(elementType)) {
    if (intType.getWidth() > 16)
      return n.unsupported("pooling " + Twine(intType.getWidth()) +
                           "-bit integers");
    FailureOr<Value> cast = n.castTo(operand, n.builder.getF32Type());
    if (failed(cast))
      return failure();
    operand = *cast;
  }
  SmallVector<NamedAttribute> attrs = windowAttrs(n, *window, true);
  attrs.push_back(n.boolAttr("ceil_mode", *ceilMode));
  FailureOr<Value> y = n.make<dtg::MaxPoolOp>(operand, attrs);
  if (failed(y))
    return failure();
  y = n.castTo(*y, elementType);
  if (failed(y))
    return failure();
  return n.setOutput(0, *y);
}

LogicalResult importAveragePool(NodeImporter &n) {
  FailureOr<Value> x = poolInput(n);
  if (failed(x))
    return failure();
  FailureOr<Window> window =
      readWindow(n, typeOf(*x).getShape().drop_front(2), {});
  FailureOr<bool> ceilMode = readCeilMode(n);
  if (failed(window) || failed(ceilMode))
    return failure();
  int64_t includePad = n.getInt("count_include_pad", 0);
  if (includePad != 0 && includePad != 1)
    return n.fail("attribute 'count_include_pad' must be 0 or 1, got " +
                  Twine(includePad));
  SmallVector<NamedAttribute> attrs = windowAttrs(n, *window, true);
  attrs.push_back(n.boolAttr("ceil_mode", *ceilMode));
  attrs.push_back(n.boolAttr("count_include_pad", includePad == 1));
  FailureOr<Value> y = n.make<dtg::AvgPoolOp>(*x, attrs);
  if (failed(y))
    return failure();
  return n.setOutput(0, *y);
}

/// |x|^p for the Lp poolings.
FailureOr<Value> absPower(NodeImporter &n, Value x, int64_t p) {
  if (p == 2)
    return n.make<dtg::MulOp>({x, x});
  FailureOr<Value> a = n.make<dtg::AbsOp>(x);
  if (failed(a) || p == 1)
    return a;
  Type type = typeOf(x).getElementType();
  return n.make<dtg::PowOp>({*a, n.scalar(type, static_cast<double>(p))});
}

/// s^(1/p) for the Lp poolings.
FailureOr<Value> root(NodeImporter &n, Value s, int64_t p) {
  if (p == 1)
    return s;
  if (p == 2)
    return n.make<dtg::SqrtOp>(s);
  Type type = typeOf(s).getElementType();
  return n.make<dtg::PowOp>({s, n.scalar(type, 1.0 / static_cast<double>(p))});
}

/// Reads the Lp pooling exponent p (default 2).
FailureOr<int64_t> readP(NodeImporter &n) {
  int64_t p = n.getInt("p", 2);
  if (p <= 0)
    return n.fail("attribute 'p' must be positive, got " + Twine(p));
  return p;
}

/// LpPool (opset 11): (sum over the window of |x|^p)^(1/p), padding counting
/// as zeros; the sum is the count_include_pad average times the window size.
LogicalResult importLpPool(NodeImporter &n) {
  FailureOr<Value> x = poolInput(n);
  if (failed(x))
    return failure();
  auto type = typeOf(*x);
  if (!isa<FloatType>(type.getElementType()))
    return n.fail("input X must hold floats");
  FailureOr<Window> window = readWindow(n, type.getShape().drop_front(2), {});
  FailureOr<int64_t> p = readP(n);
  if (failed(window) || failed(p))
    return failure();
  FailureOr<Value> powered = absPower(n, *x, *p);
  if (failed(powered))
    return failure();
  SmallVector<NamedAttribute> attrs = windowAttrs(n, *window, true);
  attrs.push_back(n.boolAttr("ceil_mode", false));
  attrs.push_back(n.boolAttr("count_include_pad", true));
  FailureOr<Value> mean = n.make<dtg::AvgPoolOp>(*powered, attrs);
  if (failed(mean))
    return failure();
  FailureOr<Value> sum = n.make<dtg::MulOp>(
      {*mean, n.scalar(type.getElementType(), windowSize(window->kernel))});
  if (failed(sum))
    return failure();
  FailureOr<Value> y = root(n, *sum, *p);
  if (failed(y))
    return failure();
  return n.setOutput(0, *y);
}

/// The spatial axes [2, rank) of a global pooling's input.
FailureOr<SmallVector<NamedAttribute>> globalAxes(NodeImporter &n, Value x) {
  int64_t rank = typeOf(x).getRank();
  if (rank < 2)
    return n.fail("input X must have rank at least 2 ([N, C, D...]), got " +
                  Twine(rank));
  SmallVector<int64_t> axes;
  for (int64_t d = 2; d < rank; ++d)
    axes.push_back(d);
  return SmallVector<NamedAttribute>{n.i64ArrayAttr("axes", axes),
                                     n.boolAttr("keepdims", true)};
}

/// GlobalMaxPool and GlobalAveragePool: a reduction over the spatial axes.
template <typename OpTy> LogicalResult importGlobalPool(NodeImporter &n) {
  FailureOr<Value> x = n.input(0);
  if (failed(x))
    return failure();
  FailureOr<SmallVector<NamedAttribute>> attrs = globalAxes(n, *x);
  if (failed(attrs))
    return failure();
  FailureOr<Value> y = n.make<OpTy>(*x, *attrs);
  if (failed(y))
    return failure();
  return n.setOutput(0, *y);
}

LogicalResult importGlobalLpPool(NodeImporter &n) {
  FailureOr<Value> x = n.input(0);
  if (failed(x))
    return failure();
  if (!isa<FloatType>(typeOf(*x).getElementType()))
    return n.fail("input X must hold floats");
  FailureOr<SmallVector<NamedAttribute>> attrs = globalAxes(n, *x);
  FailureOr<int64_t> p = readP(n);
  if (failed(attrs) || failed(p))
    return failure();
  FailureOr<Value> powered = absPower(n, *x, *p);
  if (failed(powered))
    return failure();
  FailureOr<Value> sum = n.make<dtg::ReduceSumOp>(*powered, *attrs);
  if (failed(sum))
    return failure();
  FailureOr<Value> y = root(n, *sum, *p);
  if (failed(y))
    return failure();
  return n.setOutput(0, *y);
}

} // namespace

void mlir::dtc::onnx_import::registerConvHandlers(HandlerRegistry &registry) {
  registry.add("Conv", 11, importConv);
  registry.add("ConvTranspose", 11, importConvTranspose);
  registry.add("MaxPool", 12, importMaxPool);
  registry.add("AveragePool", 11, importAveragePool);
  registry.add("LpPool", 11, importLpPool);
  registry.add("GlobalMaxPool", 1, importGlobalPool<dtg::ReduceMaxOp>);
  registry.add("GlobalAveragePool", 1, importGlobalPool<dtg::ReduceMeanOp>);
  registry.add("GlobalLpPool", 2, importGlobalLpPool);
}
