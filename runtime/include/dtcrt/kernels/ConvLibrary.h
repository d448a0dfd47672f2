//===- ConvLibrary.h - 2-D convolutions through oneDNN --------------------===//
//
// oneDNN's convolution primitives (its JIT kernels over channel-blocked
// layouts) for the forward pass and both gradients of 2-D float and bf16
// convolutions with one group, and depthwise ones, for NN.h's conv,
// convInputGrad and convWeightGrad. bf16 operands give float results (the
// kernels add the bias and round once, as on the widened path), on CPUs with
// AVX512_BF16. Measured on ResNet-18's and examples/cnn's shapes at one thread,
// reorders to and from the blocked layouts included, they take 0.3-0.8x the
// time of im2col and a GEMM (test/bench/README.md); where oneDNN has no JIT
// kernel (a CPU without AVX2, say) or one was measured slower (the input
// gradient of fewer than 8 channels: a 3-channel stem's 7x7 stride-2 one took
// 3x as long), the kernels keep im2col. Depthwise convolutions (MobileNetV2's
// at 64 x 64, batch 8, one thread, reorders included) take 0.2-0.3x the time of
// Conv.h's direct kernels: for one of each of its shapes, 2.6 / 3.0 / 2.2 ms
// -> 0.52 / 0.87 / 0.44 ms, forward / input gradient / weight gradient.
//
// A primitive is built once per geometry and pass and thread (oneDNN's
// primitive descriptors take milliseconds) and kept for the process: the
// cache is never freed, so that nothing of oneDNN is torn down after the
// library itself at exit. DTCK_CONV=im2col in the environment turns the
// library off (for comparisons).
//
//===----------------------------------------------------------------------===//

#ifndef DTCRT_KERNELS_CONVLIBRARY_H
#define DTCRT_KERNELS_CONVLIBRARY_H

#include "dtcrt/kernels/Common.h"
#include "dtcrt/kernels/Dnnl.h"

#include <array>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>

#ifdef _OPENMP
#include <omp.h>
#endif

namespace dtck::nndetail {

/// The pass of a convolution a library primitive computes.
enum class ConvPass { Forward, InputGrad, WeightGrad };

/// One pass of one 2-D convolution geometry as a oneDNN primitive, its
/// operands of `in` (f32 or bf16) and its result f32, with the reorders
/// between the kernels' plain layouts (NCHW, OIHW) and the primitive's.
class DnnlConv {
public:
  DnnlConv(ConvPass pass, const Shape &sx, const Shape &sw, const Shape &sy,
           const int64_t *strides, const int64_t *pads,
           const int64_t *dilations, dnnl_data_type_t in, int64_t group = 1)
      : pass(pass) {
    if (!dnnlEngine() || !dnnlStream())
      return;
    // The pass's result is f32, its operands `in`.
    dnnl_data_type_t xType = pass == ConvPass::InputGrad ? dnnl_f32 : in;
    dnnl_data_type_t wType = pass == ConvPass::WeightGrad ? dnnl_f32 : in;
    dnnl_data_type_t yType = pass == ConvPass::Forward ? dnnl_f32 : in;
    dnnl_dims_t xDims = {sx.dims[0], sx.dims[1], sx.dims[2], sx.dims[3]};
    // Groups: the weight as oneDNN's [G, F / G, C / G, KH, KW] (goihw, the
    // same memory as OIHW).
    int wRank = group > 1 ? 5 : 4;
    dnnl_dims_t wDims = {sw.dims[0], sw.dims[1], sw.dims[2], sw.dims[3]};
    if (group > 1) {
      dnnl_dims_t grouped = {group, sw.dims[0] / group, sw.dims[1], sw.dims[2],
                             sw.dims[3]};
      std::copy(grouped, grouped + 5, wDims);
    }
    dnnl_dims_t yDims = {sy.dims[0], sy.dims[1], sy.dims[2], sy.dims[3]};
    dnnl_dims_t stride = {strides[0], strides[1]};
    // oneDNN counts dilation from 0 (no gaps).
    dnnl_dims_t dilate = {dilations[0] - 1, dilations[1] - 1};
    dnnl_dims_t padBegin = {pads[0], pads[1]}, padEnd = {pads[2], pads[3]};
    dnnl_memory_desc_t xAny, wAny, yAny, xIn, wIn, yOut;
    if (dnnl_memory_desc_init_by_tag(&xIn, 4, xDims, in, dnnl_format_tag_any) !=
            dnnl_success ||
        dnnl_memory_desc_init_by_tag(&wIn, wRank, wDims, in,
                                     dnnl_format_tag_any) != dnnl_success ||
        dnnl_memory_desc_init_by_tag(&yOut, 4, yDims, dnnl_f32,
                                     dnnl_format_tag_any) != dnnl_success ||
        dnnl_memory_desc_init_by_tag(&xAny, 4, xDims, xType,
                                     dnnl_format_tag_any) != dnnl_success ||
        dnnl_memory_desc_init_by_tag(&wAny, wRank, wDims, wType,
                                     dnnl_format_tag_any) != dnnl_success ||
        dnnl_memory_desc_init_by_tag(&yAny, 4, yDims, yType,
                                     dnnl_format_tag_any) != dnnl_success ||
        dnnl_memory_desc_init_by_tag(&xPlain, 4, xDims, xType, dnnl_nchw) !=
            dnnl_success ||
        dnnl_memory_desc_init_by_tag(&wPlain, wRank, wDims, wType,
                                     group > 1 ? dnnl_goihw : dnnl_oihw) !=
            dnnl_success ||
        dnnl_memory_desc_init_by_tag(&yPlain, 4, yDims, yType, dnnl_nchw) !=
            dnnl_success)
      return;
    // The backward passes take the forward primitive descriptor as a hint.
    dnnl_convolution_desc_t forward;
    if (dnnl_dilated_convolution_forward_desc_init(
            &forward, dnnl_forward_training, dnnl_convolution_direct, &xIn,
            &wIn, nullptr, &yOut, stride, dilate, padBegin,
            padEnd) != dnnl_success ||
        dnnl_primitive_desc_create(&hint, &forward, nullptr, dnnlEngine(),
                                   nullptr) != dnnl_success) {
      hint = nullptr;
      return;
    }
    dnnl_convolution_desc_t desc;
    dnnl_status_t status = dnnl_success;
    if (pass == ConvPass::InputGrad)
      status = dnnl_dilated_convolution_backward_data_desc_init(
          &desc, dnnl_convolution_direct, &xAny, &wAny, &yAny, stride, dilate,
          padBegin, padEnd);
    else if (pass == ConvPass::WeightGrad)
      status = dnnl_dilated_convolution_backward_weights_desc_init(
          &desc, dnnl_convolution_direct, &xAny, &wAny, nullptr, &yAny, stride,
          dilate, padBegin, padEnd);
    if (status != dnnl_success)
      return;
    if (pass == ConvPass::Forward)
      pd = hint, hint = nullptr;
    else if (dnnl_primitive_desc_create(&pd, &desc, nullptr, dnnlEngine(),
                                        hint) != dnnl_success) {
      pd = nullptr;
      return;
    }
    // A JIT kernel (for bf16 also a brgemm one), not a reference kernel.
    const char *impl = nullptr;
    if (dnnl_primitive_desc_query(pd, dnnl_query_impl_info_str, 0, &impl) !=
            dnnl_success ||
        !impl ||
        (std::strncmp(impl, "jit", 3) != 0 &&
         (in == dnnl_f32 || std::strncmp(impl, "brg", 3) != 0)))
      return;
    if (dnnl_primitive_create(&primitive, pd) != dnnl_success) {
      primitive = nullptr;
      return;
    }
    // The operands in pass order: two inputs, one output.
    const dnnl_memory_desc_t *plain[3];
    dnnl_query_t query[3];
    if (pass == ConvPass::Forward) {
      plain[0] = &xPlain, plain[1] = &wPlain, plain[2] = &yPlain;
      query[0] = dnnl_query_src_md, query[1] = dnnl_query_weights_md;
      query[2] = dnnl_query_dst_md;
      argument = {DNNL_ARG_SRC, DNNL_ARG_WEIGHTS, DNNL_ARG_DST};
    } else if (pass == ConvPass::InputGrad) {
      plain[0] = &yPlain, plain[1] = &wPlain, plain[2] = &xPlain;
      query[0] = dnnl_query_diff_dst_md, query[1] = dnnl_query_weights_md;
      query[2] = dnnl_query_diff_src_md;
      argument = {DNNL_ARG_DIFF_DST, DNNL_ARG_WEIGHTS, DNNL_ARG_DIFF_SRC};
    } else {
      plain[0] = &yPlain, plain[1] = &xPlain, plain[2] = &wPlain;
      query[0] = dnnl_query_diff_dst_md, query[1] = dnnl_query_src_md;
      query[2] = dnnl_query_diff_weights_md;
      argument = {DNNL_ARG_DIFF_DST, DNNL_ARG_SRC, DNNL_ARG_DIFF_WEIGHTS};
    }
    for (int i = 0; i < 3; ++i)
      if (!operands[i].init(plain[i],
                            dnnl_primitive_desc_query_md(pd, query[i], 0),
                            /*toInner=*/i < 2))
        return;
    ready = true;
  }

  ~DnnlConv() {
    for (Operand &operand : operands)
      operand.destroy();
    if (primitive)
      dnnl_primitive_destroy(primitive);
    if (pd)
      dnnl_primitive_desc_destroy(pd);
    if (hint)
      dnnl_primitive_desc_destroy(hint);
  }
  DnnlConv(const DnnlConv &) = delete;
  DnnlConv &operator=(const DnnlConv &) = delete;

  /// True when oneDNN has a JIT kernel for this pass and geometry.
  bool ok() const { return ready; }

  /// Runs the pass: y = conv(x, w) (Forward: a = x, b = w, out = y),
  /// dx from dy and w (InputGrad: a = dy, b = w, out = dx), dw from dy and
  /// x (WeightGrad: a = dy, b = x, out = dw). False if oneDNN failed (then
  /// `out` is unspecified and the caller computes it).
  bool run(const void *a, const void *b, void *out) {
    const void *data[3] = {a, b, out};
    for (int i = 0; i < 3; ++i)
      if (dnnl_memory_set_data_handle(
              operands[i].user, const_cast<void *>(data[i])) != dnnl_success)
        return false;
    for (int i = 0; i < 2; ++i)
      if (!operands[i].reorder_())
        return false;
    dnnl_exec_arg_t args[3];
    for (int i = 0; i < 3; ++i)
      args[i] = {argument[i], operands[i].inner};
    if (dnnl_primitive_execute(primitive, dnnlStream(), 3, args) !=
        dnnl_success)
      return false;
    return operands[2].reorder_() &&
           dnnl_stream_wait(dnnlStream()) == dnnl_success;
  }

private:
  /// A plain-layout tensor of the caller's (`user`, its address set per
  /// run) and the primitive's layout of it (`inner`: the same memory when
  /// the layouts agree, else a buffer of its own and a reorder between).
  struct Operand {
    dnnl_memory_t user = nullptr, inner = nullptr;
    dnnl_primitive_t reorder = nullptr;
    dnnl_memory_t from = nullptr, to = nullptr;

    bool init(const dnnl_memory_desc_t *plain, const dnnl_memory_desc_t *own,
              bool toInner) {
      if (!own || dnnl_memory_create(&user, plain, dnnlEngine(),
                                     DNNL_MEMORY_NONE) != dnnl_success)
        return false;
      if (dnnl_memory_desc_equal(plain, own)) {
        inner = user;
        return true;
      }
      if (dnnl_memory_create(&inner, own, dnnlEngine(), DNNL_MEMORY_ALLOCATE) !=
          dnnl_success) {
        inner = nullptr;
        return false;
      }
      from = toInner ? user : inner;
      to = toInner ? inner : user;
      dnnl_primitive_desc_t rpd;
      if (dnnl_reorder_primitive_desc_create(
              &rpd, toInner ? plain : own, dnnlEngine(), toInner ? own : plain,
              dnnlEngine(), nullptr) != dnnl_success)
        return false;
      dnnl_status_t status = dnnl_primitive_create(&reorder, rpd);
      dnnl_primitive_desc_destroy(rpd);
      if (status != dnnl_success)
        reorder = nullptr;
      return status == dnnl_success;
    }

    /// Runs the reorder, if any (a trailing underscore: `reorder` is it).
    bool reorder_() {
      if (!reorder)
        return true;
      dnnl_exec_arg_t args[2] = {{DNNL_ARG_FROM, from}, {DNNL_ARG_TO, to}};
      return dnnl_primitive_execute(reorder, dnnlStream(), 2, args) ==
             dnnl_success;
    }

    void destroy() {
      if (reorder)
        dnnl_primitive_destroy(reorder);
      if (inner && inner != user)
        dnnl_memory_destroy(inner);
      if (user)
        dnnl_memory_destroy(user);
    }
  };

  ConvPass pass;
  bool ready = false;
  dnnl_memory_desc_t xPlain, wPlain, yPlain;
  dnnl_primitive_desc_t hint = nullptr, pd = nullptr;
  dnnl_primitive_t primitive = nullptr;
  Operand operands[3];
  std::array<int, 3> argument = {};
};

/// True for a depthwise convolution over two spatial dimensions (one input
/// channel and one filter per group), which oneDNN (convLibraryFor) or
/// Conv.h's direct kernels take instead of im2col and a product per channel.
inline bool isDepthwise2d(const Shape &sx, const Shape &sw, int64_t group) {
  return sx.rank == 4 && group > 1 && group == sx.dims[1] &&
         group == sw.dims[0] && sw.dims[1] == 1;
}

/// True unless DTCK_CONV=im2col is set.
inline bool convLibraryEnabled() {
  static const bool enabled = [] {
    const char *choice = std::getenv("DTCK_CONV");
    return !choice || std::strcmp(choice, "im2col") != 0;
  }();
  return enabled;
}

/// This thread's primitive for the pass of a convolution of `in` operands
/// (f32 or bf16) over x [N, C, H, W] and w [F, C/group, KH, KW] into
/// y [N, F, OH, OW] (pads: top, left, bottom, right), or nullptr where the
/// kernels keep their own: the library off, not two spatial dimensions,
/// groups other than depthwise ones (a channel each), inside a parallel
/// region (oneDNN would run on one thread), no JIT kernel, an input
/// gradient of fewer than 8 channels, or bf16 on a CPU without AVX512_BF16.
inline DnnlConv *convLibraryFor(ConvPass pass, const Shape &sx, const Shape &sw,
                                const Shape &sy, const int64_t *strides,
                                const int64_t *pads, const int64_t *dilations,
                                int64_t group, dnnl_data_type_t in = dnnl_f32) {
  if (!convLibraryEnabled() || sx.rank != 4 ||
      (group != 1 && !isDepthwise2d(sx, sw, group)) ||
      (pass == ConvPass::InputGrad && sx.dims[1] < 8) ||
      (in == dnnl_bf16 && !dnnlHasBf16()))
    return nullptr;
#ifdef _OPENMP
  if (omp_in_parallel())
    return nullptr;
#endif
  using Key = std::array<int64_t, 22>;
  Key key = {static_cast<int64_t>(in),
             static_cast<int64_t>(pass),
             strides[0],
             strides[1],
             pads[0],
             pads[1],
             pads[2],
             pads[3],
             dilations[0],
             dilations[1]};
  for (int d = 0; d < 4; ++d) {
    key[10 + d] = sx.dims[d];
    key[14 + d] = sw.dims[d];
    key[18 + d] = sy.dims[d];
  }
  // Never freed: see the file comment.
  thread_local auto *cache = new std::map<Key, std::unique_ptr<DnnlConv>>();
  std::unique_ptr<DnnlConv> &entry = (*cache)[key];
  if (!entry)
    entry = std::make_unique<DnnlConv>(pass, sx, sw, sy, strides, pads,
                                       dilations, in, group);
  return entry->ok() ? entry.get() : nullptr;
}

/// convLibraryFor with the operands of T: float and bf16 convolutions
/// (others widen to float first, or keep im2col: nullptr).
template <typename T>
DnnlConv *convLibraryOf(ConvPass pass, const Shape &sx, const Shape &sw,
                        const Shape &sy, const int64_t *strides,
                        const int64_t *pads, const int64_t *dilations,
                        int64_t group) {
  if constexpr (std::is_same_v<T, float> || std::is_same_v<T, bf16>)
    return convLibraryFor(pass, sx, sw, sy, strides, pads, dilations, group,
                          std::is_same_v<T, float> ? dnnl_f32 : dnnl_bf16);
  else
    return nullptr;
}

} // namespace dtck::nndetail

#endif // DTCRT_KERNELS_CONVLIBRARY_H
