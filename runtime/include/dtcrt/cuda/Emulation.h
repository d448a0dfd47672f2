//===- Emulation.h - CUDA C++ run on the host, one fiber per thread -------===//
//
// `dtc compile --target cuda --cuda-emulation` builds the generated .cu with
// the host C++ compiler under this header. A kernel launch runs its blocks
// one after another; a block's threads are fibers (stacks of their own) on one
// OS thread, switched only where CUDA lets threads wait for each other:
// __syncthreads() (every live thread of the block) and the warp shuffles
// (every lane of the warp). So shared memory, barriers and shuffles keep
// their meaning, and the checks below hold:
//
//  * Global memory: every cudaMalloc is its own mapping with an inaccessible
//    page after its end (and before its first page), so an access past an
//    allocation faults; the fault is reported with the kernel, block,
//    thread and allocation, and the program exits with status 1.
//  * Shared memory (DTCG_SHARED arrays): each word records the thread that
//    last wrote it and the threads that read it since the last barrier; a
//    read of a word another thread wrote, or a write of a word another
//    thread read or wrote, with no __syncthreads() between, is a race and is
//    reported. An index outside the array is reported too.
//
// cuBLASLt and NCCL have host equivalents in Device.h; this header holds
// only the CUDA language and runtime API subset the generated code uses.
//
//===----------------------------------------------------------------------===//

#ifndef DTCRT_CUDA_EMULATION_H
#define DTCRT_CUDA_EMULATION_H

#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <string>
#include <sys/mman.h>
#include <unistd.h>
#include <vector>

#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __launch_bounds__(...)
#define __restrict__ __restrict

struct dim3 {
  unsigned x = 1, y = 1, z = 1;
  constexpr dim3(unsigned x = 1, unsigned y = 1, unsigned z = 1)
      : x(x), y(y), z(z) {}
};

typedef int cudaError_t;
typedef void *cudaStream_t;
typedef void *cudaEvent_t;
enum : int {
  cudaSuccess = 0,
  cudaErrorMemoryAllocation = 2,
  cudaErrorNotReady = 600
};
enum cudaMemcpyKind {
  cudaMemcpyHostToHost,
  cudaMemcpyHostToDevice,
  cudaMemcpyDeviceToHost,
  cudaMemcpyDeviceToDevice,
  cudaMemcpyDefault
};

#if !defined(__x86_64__)
#error "the CUDA emulation switches fibers with x86-64 code"
#endif

/// Switches stacks: saves the callee-saved registers on the current stack,
/// stores its pointer in *save, and resumes the stack `next` (saved the
/// same way, or prepared by dtcemu::prepareStack). No system call (ucontext
/// swaps the signal mask on every switch, which made emulation 100x
/// slower); the floating-point control words are the same in every fiber.
extern "C" void dtcemu_switch(void **save, void *next);
asm(R"(
  .text
  .weak dtcemu_switch
  .type dtcemu_switch, @function
dtcemu_switch:
  pushq %rbp
  pushq %rbx
  pushq %r12
  pushq %r13
  pushq %r14
  pushq %r15
  movq %rsp, (%rdi)
  movq %rsi, %rsp
  popq %r15
  popq %r14
  popq %r13
  popq %r12
  popq %rbx
  popq %rbp
  ret
  .size dtcemu_switch, .-dtcemu_switch
)");

namespace dtcemu {

/// Where a fiber stands.
enum class State { Ready, AtBarrier, AtShuffle, Done };

struct Fiber {
  void *stack = nullptr; // the saved stack pointer while switched out
  dim3 threadIdx;
  unsigned linear = 0; // x fastest
  State state = State::Ready;
  unsigned shuffles = 0; // shuffles this fiber has done
};

/// One allocation of device memory: [base, base + bytes).
struct Allocation {
  uint8_t *base;
  size_t bytes;
  uint8_t *mapping;
  size_t mapped;
};

/// The emulator: the launch in progress and the device's allocations.
struct Emulator {
  void *scheduler = nullptr;
  std::vector<Fiber> fibers;
  std::vector<char> stacks;
  Fiber *current = nullptr;
  dim3 blockIdx, blockDim, gridDim;
  const char *kernel = nullptr;
  const std::function<void()> *body = nullptr;
  uint64_t blockSerial = 0; // distinct for every block run
  uint64_t epoch = 0;       // barriers released so far
  // Warp exchange: two generations so that a lane may write the next
  // shuffle's value while its warp's last lanes still read this one's.
  std::vector<uint64_t> exchange[2];
  std::map<uint8_t *, Allocation> allocations; // by base
  static constexpr size_t kStack = 64 * 1024;
};

inline Emulator &emulator() {
  static Emulator e;
  return e;
}

inline Fiber &self() { return *emulator().current; }

[[noreturn]] inline void failInKernel(const std::string &what) {
  Emulator &e = emulator();
  std::fprintf(stderr, "error: CUDA emulation: %s", what.c_str());
  if (e.kernel) {
    std::fprintf(stderr, " in kernel '%s'", e.kernel);
    if (e.current)
      std::fprintf(stderr, ", block (%u,%u,%u), thread (%u,%u,%u)",
                   e.blockIdx.x, e.blockIdx.y, e.blockIdx.z,
                   e.current->threadIdx.x, e.current->threadIdx.y,
                   e.current->threadIdx.z);
  }
  std::fprintf(stderr, "\n");
  std::fflush(stderr);
  _exit(1);
}

/// A fault inside an emulated kernel: an access outside every allocation
/// (or into the guard page after one).
inline void onFault(int, siginfo_t *info, void *) {
  Emulator &e = emulator();
  auto *address = static_cast<uint8_t *>(info->si_addr);
  char text[512];
  const Allocation *near = nullptr;
  for (auto &[base, a] : e.allocations)
    if (address >= a.mapping && address < a.mapping + a.mapped)
      near = &a;
  if (near && address >= near->base + near->bytes)
    std::snprintf(text, sizeof(text),
                  "out-of-bounds access at %p, %zu bytes past the end of a "
                  "%zu-byte allocation at %p",
                  static_cast<void *>(address),
                  size_t(address - (near->base + near->bytes)), near->bytes,
                  static_cast<void *>(near->base));
  else if (near)
    std::snprintf(text, sizeof(text),
                  "out-of-bounds access at %p, %zu bytes before a %zu-byte "
                  "allocation at %p",
                  static_cast<void *>(address), size_t(near->base - address),
                  near->bytes, static_cast<void *>(near->base));
  else
    std::snprintf(text, sizeof(text),
                  "invalid memory access at %p (no device allocation)",
                  static_cast<void *>(address));
  if (!e.kernel) {
    std::fprintf(stderr, "error: %s outside any kernel\n", text);
    std::fflush(stderr);
    _exit(1);
  }
  failInKernel(text);
}

inline void installFaultHandler() {
  static bool installed = [] {
    static std::vector<char> altStack(1 << 16);
    stack_t ss{};
    ss.ss_sp = altStack.data();
    ss.ss_size = altStack.size();
    sigaltstack(&ss, nullptr);
    struct sigaction sa {};
    sa.sa_sigaction = onFault;
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
    sigaction(SIGSEGV, &sa, nullptr);
    sigaction(SIGBUS, &sa, nullptr);
    return true;
  }();
  (void)installed;
}

/// Device memory: the bytes end at a page boundary followed by a page no one
/// may touch, and a page before the first is inaccessible too.
inline void *allocate(size_t bytes) {
  installFaultHandler();
  Emulator &e = emulator();
  size_t page = size_t(sysconf(_SC_PAGESIZE));
  size_t rounded = (bytes + page - 1) / page * page;
  if (rounded == 0)
    rounded = page;
  size_t mapped = rounded + 2 * page;
  void *m =
      mmap(nullptr, mapped, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (m == MAP_FAILED)
    return nullptr;
  auto *mapping = static_cast<uint8_t *>(m);
  if (mprotect(mapping + page, rounded, PROT_READ | PROT_WRITE) != 0)
    return nullptr;
  // Aligned to 256 bytes as cudaMalloc's are, as close to the end as that
  // allows.
  uint8_t *base = mapping + page + ((rounded - bytes) / 256 * 256);
  e.allocations[base] = {base, bytes, mapping, mapped};
  return base;
}

inline bool release(void *p) {
  Emulator &e = emulator();
  auto it = e.allocations.find(static_cast<uint8_t *>(p));
  if (it == e.allocations.end())
    return false;
  munmap(it->second.mapping, it->second.mapped);
  e.allocations.erase(it);
  return true;
}

inline void yield() {
  Emulator &e = emulator();
  dtcemu_switch(&e.current->stack, e.scheduler);
}

/// Where a new fiber starts: runs the kernel's body, then never returns.
[[noreturn]] inline void trampoline() {
  Emulator &e = emulator();
  (*e.body)();
  e.current->state = State::Done;
  dtcemu_switch(&e.current->stack, e.scheduler);
  __builtin_unreachable();
}

/// A fresh stack [base, base + bytes) laid out as dtcemu_switch leaves a
/// switched-out one: six zeroed registers, then the address it returns to
/// (the trampoline), 16-byte aligned as a call would leave it.
inline void *prepareStack(char *base, size_t bytes) {
  auto top = reinterpret_cast<uintptr_t>(base + bytes) & ~uintptr_t(15);
  auto *slot = reinterpret_cast<void **>(top - 16); // slot % 16 == 0
  slot[0] = reinterpret_cast<void *>(&trampoline);
  slot[1] = nullptr;
  void **sp = slot - 6;
  for (int k = 0; k < 6; ++k)
    sp[k] = nullptr;
  return sp;
}

/// Runs `body` as every thread of every block of a launch.
inline void run(const char *name, dim3 grid, dim3 block,
                const std::function<void()> &body) {
  installFaultHandler();
  Emulator &e = emulator();
  unsigned threads = block.x * block.y * block.z;
  if (threads == 0 || threads > 1024 || grid.x * grid.y * grid.z == 0) {
    e.kernel = name;
    failInKernel("invalid launch configuration (" + std::to_string(threads) +
                 " threads per block)");
  }
  e.kernel = name;
  e.body = &body;
  e.gridDim = grid;
  e.blockDim = block;
  e.fibers.assign(threads, Fiber());
  if (e.stacks.size() < threads * Emulator::kStack)
    e.stacks.resize(threads * Emulator::kStack);
  for (auto &x : e.exchange)
    x.assign(threads, 0);
  for (unsigned bz = 0; bz < grid.z; ++bz)
    for (unsigned by = 0; by < grid.y; ++by)
      for (unsigned bx = 0; bx < grid.x; ++bx) {
        e.blockIdx = dim3(bx, by, bz);
        ++e.blockSerial;
        ++e.epoch;
        for (unsigned t = 0; t < threads; ++t) {
          Fiber &f = e.fibers[t];
          f = Fiber();
          f.linear = t;
          f.threadIdx = dim3(t % block.x, (t / block.x) % block.y,
                             t / (block.x * block.y));
          f.stack = prepareStack(e.stacks.data() + t * Emulator::kStack,
                                 Emulator::kStack);
        }
        for (;;) {
          bool ran = false;
          for (Fiber &f : e.fibers) {
            if (f.state != State::Ready)
              continue;
            e.current = &f;
            dtcemu_switch(&e.scheduler, f.stack);
            e.current = nullptr;
            ran = true;
          }
          // Release a barrier every live thread reached.
          unsigned done = 0, atBarrier = 0;
          for (Fiber &f : e.fibers) {
            done += f.state == State::Done;
            atBarrier += f.state == State::AtBarrier;
          }
          if (done == threads)
            break;
          if (atBarrier > 0 && atBarrier + done == threads) {
            ++e.epoch;
            for (Fiber &f : e.fibers)
              if (f.state == State::AtBarrier)
                f.state = State::Ready;
            continue;
          }
          // Release each warp whose live lanes all wait in a shuffle.
          for (unsigned w = 0; w < threads; w += 32) {
            unsigned end = std::min(threads, w + 32), waiting = 0, live = 0;
            for (unsigned t = w; t < end; ++t) {
              live += e.fibers[t].state != State::Done;
              waiting += e.fibers[t].state == State::AtShuffle;
            }
            if (waiting > 0 && waiting == live) {
              if (live != end - w) {
                e.current = &e.fibers[w];
                failInKernel("a warp shuffle after some of the warp's lanes "
                             "exited");
              }
              for (unsigned t = w; t < end; ++t)
                e.fibers[t].state = State::Ready;
              ran = true;
            }
          }
          if (!ran) {
            for (Fiber &f : e.fibers)
              if (f.state != State::Done)
                e.current = &f;
            failInKernel("threads wait forever (a __syncthreads() or warp "
                         "shuffle some threads of the block never reach)");
          }
        }
      }
  e.kernel = nullptr;
  e.body = nullptr;
}

/// A warp shuffle: every lane publishes `value`, waits for its warp, and
/// reads lane `source`'s.
template <typename T>
inline T shuffle(T value, int (*pick)(int, int), int arg, int width) {
  static_assert(sizeof(T) <= sizeof(uint64_t), "shuffle of a wide type");
  Emulator &e = emulator();
  Fiber &f = self();
  unsigned generation = f.shuffles & 1;
  uint64_t slot = 0;
  std::memcpy(&slot, &value, sizeof(T));
  e.exchange[generation][f.linear] = slot;
  f.state = State::AtShuffle;
  yield();
  ++f.shuffles;
  int lane = int(f.linear % 32);
  int base = int(f.linear) - lane;
  int segment = lane / width * width;
  int source = pick(lane - segment, arg);
  if (source < 0 || source >= width)
    return value;
  source += segment;
  if (unsigned(base + source) >= e.fibers.size())
    return value;
  T result;
  uint64_t bits = e.exchange[generation][unsigned(base + source)];
  std::memcpy(&result, &bits, sizeof(T));
  return result;
}

inline void syncthreads() {
  self().state = State::AtBarrier;
  yield();
}

/// A shared-memory array of one block, checked for races and bounds.
template <typename T, int N> class SharedArray {
  struct Word {
    uint64_t block = 0, epoch = 0;
    int writer = -1;
    int reader = -1; // a thread that read it this epoch (-2: several)
  };
  T data[N];
  Word words[N];

  Word &check(int i) {
    if (i < 0 || i >= N)
      failInKernel("shared memory index " + std::to_string(i) +
                   " outside an array of " + std::to_string(N));
    Emulator &e = emulator();
    Word &w = words[i];
    if (w.block != e.blockSerial || w.epoch != e.epoch) {
      w = Word();
      w.block = e.blockSerial;
      w.epoch = e.epoch;
    }
    return w;
  }

public:
  class Ref {
    SharedArray &a;
    int i;

  public:
    Ref(SharedArray &a, int i) : a(a), i(i) {}
    operator T() const { return a.read(i); }
    Ref &operator=(const T &v) {
      a.write(i, v);
      return *this;
    }
    Ref &operator=(const Ref &other) { return *this = T(other); }
    Ref &operator+=(const T &v) { return *this = T(*this) + v; }
  };

  T read(int i) {
    Word &w = check(i);
    int me = int(self().linear);
    if (w.writer >= 0 && w.writer != me)
      failInKernel("shared memory race: word " + std::to_string(i) +
                   " read by thread " + std::to_string(me) + " after thread " +
                   std::to_string(w.writer) +
                   " wrote it, with no __syncthreads() between");
    w.reader = (w.reader == -1 || w.reader == me) ? me : -2;
    return data[i];
  }
  void write(int i, const T &v) {
    Word &w = check(i);
    int me = int(self().linear);
    if (w.writer >= 0 && w.writer != me)
      failInKernel("shared memory race: word " + std::to_string(i) +
                   " written by threads " + std::to_string(w.writer) + " and " +
                   std::to_string(me) + " with no __syncthreads() between");
    if (w.reader == -2 || (w.reader >= 0 && w.reader != me))
      failInKernel("shared memory race: word " + std::to_string(i) +
                   " written by thread " + std::to_string(me) +
                   " after another thread read it, with no __syncthreads() "
                   "between");
    w.writer = me;
    data[i] = v;
  }
  Ref operator[](int i) { return Ref(*this, i); }
};

inline int pickXor(int lane, int mask) { return lane ^ mask; }
inline int pickDown(int lane, int delta) { return lane + delta; }
inline int pickIndex(int, int source) { return source; }

} // namespace dtcemu

#define threadIdx (::dtcemu::self().threadIdx)
#define blockIdx (::dtcemu::emulator().blockIdx)
#define blockDim (::dtcemu::emulator().blockDim)
#define gridDim (::dtcemu::emulator().gridDim)
#define warpSize 32

inline void __syncthreads() { dtcemu::syncthreads(); }
template <typename T>
inline T __shfl_xor_sync(unsigned, T value, int mask, int width = 32) {
  return dtcemu::shuffle(value, dtcemu::pickXor, mask, width);
}
template <typename T>
inline T __shfl_down_sync(unsigned, T value, unsigned delta, int width = 32) {
  return dtcemu::shuffle(value, dtcemu::pickDown, int(delta), width);
}
template <typename T>
inline T __shfl_sync(unsigned, T value, int source, int width = 32) {
  return dtcemu::shuffle(value, dtcemu::pickIndex, source, width);
}
/// One OS thread runs every fiber: atomics are plain updates.
template <typename T> inline T atomicAdd(T *address, T value) {
  T old = *address;
  *address = old + value;
  return old;
}

inline unsigned atomicCAS(unsigned *address, unsigned compare, unsigned value) {
  unsigned old = *address;
  if (old == compare)
    *address = value;
  return old;
}

/// The CUDA runtime API subset generated code calls.
inline cudaError_t cudaMalloc(void **p, size_t bytes) {
  *p = dtcemu::allocate(bytes);
  return *p ? cudaSuccess : cudaErrorMemoryAllocation;
}
inline cudaError_t cudaFree(void *p) {
  dtcemu::release(p);
  return cudaSuccess;
}
inline cudaError_t cudaMallocHost(void **p, size_t bytes) {
  *p = std::malloc(bytes ? bytes : 1);
  return *p ? cudaSuccess : cudaErrorMemoryAllocation;
}
inline cudaError_t cudaFreeHost(void *p) {
  std::free(p);
  return cudaSuccess;
}
inline cudaError_t cudaMemcpy(void *d, const void *s, size_t n,
                              cudaMemcpyKind) {
  if (n)
    std::memmove(d, s, n);
  return cudaSuccess;
}
inline cudaError_t cudaMemcpyAsync(void *d, const void *s, size_t n,
                                   cudaMemcpyKind k, cudaStream_t = nullptr) {
  return cudaMemcpy(d, s, n, k);
}
inline cudaError_t cudaMemsetAsync(void *d, int v, size_t n,
                                   cudaStream_t = nullptr) {
  std::memset(d, v, n);
  return cudaSuccess;
}
inline cudaError_t cudaStreamCreate(cudaStream_t *s) {
  *s = nullptr;
  return cudaSuccess;
}
inline cudaError_t cudaStreamSynchronize(cudaStream_t) { return cudaSuccess; }
inline cudaError_t cudaStreamQuery(cudaStream_t) { return cudaSuccess; }
inline cudaError_t cudaMemcpy2DAsync(void *d, size_t dpitch, const void *s,
                                     size_t spitch, size_t width, size_t height,
                                     cudaMemcpyKind, cudaStream_t = nullptr) {
  for (size_t row = 0; row < height; ++row)
    std::memmove(static_cast<char *>(d) + row * dpitch,
                 static_cast<const char *>(s) + row * spitch, width);
  return cudaSuccess;
}
// Streams run in program order: events order nothing more. An event holds
// the host time it was recorded at (the emulated device runs as the host
// calls it), for cudaEventElapsedTime.
enum : unsigned { cudaEventDisableTiming = 2 };
inline cudaError_t cudaEventCreateWithFlags(cudaEvent_t *e, unsigned) {
  *e = new double(0);
  return cudaSuccess;
}
inline cudaError_t cudaEventCreate(cudaEvent_t *e) {
  return cudaEventCreateWithFlags(e, 0);
}
inline cudaError_t cudaEventDestroy(cudaEvent_t e) {
  delete static_cast<double *>(e);
  return cudaSuccess;
}
inline cudaError_t cudaEventRecord(cudaEvent_t e, cudaStream_t = nullptr) {
  if (e)
    *static_cast<double *>(e) =
        std::chrono::duration<double, std::milli>(
            std::chrono::steady_clock::now().time_since_epoch())
            .count();
  return cudaSuccess;
}
inline cudaError_t cudaEventElapsedTime(float *ms, cudaEvent_t start,
                                        cudaEvent_t end) {
  *ms = float(*static_cast<double *>(end) - *static_cast<double *>(start));
  return cudaSuccess;
}
inline cudaError_t cudaStreamWaitEvent(cudaStream_t, cudaEvent_t,
                                       unsigned = 0) {
  return cudaSuccess;
}
inline cudaError_t cudaGetDeviceCount(int *n) {
  *n = 1;
  return cudaSuccess;
}
inline cudaError_t cudaSetDevice(int) { return cudaSuccess; }
inline cudaError_t cudaDeviceSynchronize() { return cudaSuccess; }
inline cudaError_t cudaGetLastError() { return cudaSuccess; }
inline const char *cudaGetErrorString(cudaError_t) { return "no error"; }

#endif // DTCRT_CUDA_EMULATION_H
