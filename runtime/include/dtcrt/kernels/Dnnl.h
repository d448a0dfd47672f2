//===- Dnnl.h - oneDNN's engine and streams for the kernels ---------------===//
//
// The CPU engine and the per-thread streams that the kernels' oneDNN
// primitives (ConvLibrary.h, MatmulLibrary.h) run on. Through the C API:
// dnnl.hpp would add seconds to every generated translation unit.
//
//===----------------------------------------------------------------------===//

#ifndef DTCRT_KERNELS_DNNL_H
#define DTCRT_KERNELS_DNNL_H

#include <dnnl.h>

namespace dtck::nndetail {

/// The process's oneDNN CPU engine, or nullptr if oneDNN cannot make one.
inline dnnl_engine_t dnnlEngine() {
  static dnnl_engine_t cpu = [] {
    dnnl_engine_t e = nullptr;
    return dnnl_engine_create(&e, dnnl_cpu, 0) == dnnl_success ? e : nullptr;
  }();
  return cpu;
}

/// The calling thread's stream on dnnlEngine(), or nullptr.
inline dnnl_stream_t dnnlStream() {
  thread_local dnnl_stream_t own = [] {
    dnnl_stream_t s = nullptr;
    return dnnlEngine() &&
                   dnnl_stream_create(&s, dnnlEngine(),
                                      dnnl_stream_default_flags) == dnnl_success
               ? s
               : nullptr;
  }();
  return own;
}

/// True when oneDNN sees AVX512_BF16 on this CPU (bf16 products and
/// convolutions then go to its kernels instead of widening to float).
inline bool dnnlHasBf16() {
  static const bool has = [] {
    auto isa = static_cast<unsigned>(dnnl_get_effective_cpu_isa());
    auto bf16 = static_cast<unsigned>(dnnl_cpu_isa_avx512_core_bf16);
    return (isa & bf16) == bf16;
  }();
  return has;
}

} // namespace dtck::nndetail

#endif // DTCRT_KERNELS_DNNL_H
