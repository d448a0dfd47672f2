//===- Buffer.h - 64-byte aligned, zeroed host memory ---------------------===//

#ifndef DTCRT_CORE_BUFFER_H
#define DTCRT_CORE_BUFFER_H

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <utility>

namespace dtcrt {

/// Alignment of every buffer the runtime hands to a step.
constexpr size_t kBufferAlignment = 64;

/// An owned, zero-filled block of memory aligned to kBufferAlignment.
class AlignedBuffer {
public:
  AlignedBuffer() = default;
  AlignedBuffer(const AlignedBuffer &) = delete;
  AlignedBuffer &operator=(const AlignedBuffer &) = delete;
  AlignedBuffer(AlignedBuffer &&other) noexcept { swap(other); }
  AlignedBuffer &operator=(AlignedBuffer &&other) noexcept {
    AlignedBuffer tmp(std::move(other));
    swap(tmp);
    return *this;
  }
  ~AlignedBuffer() { std::free(data_); }

  /// Allocates `bytes` (at least one alignment unit, so the pointer is
  /// never null); false if memory is exhausted.
  bool allocate(size_t bytes) {
    std::free(data_);
    size_t rounded =
        (bytes + kBufferAlignment - 1) / kBufferAlignment * kBufferAlignment;
    if (rounded == 0)
      rounded = kBufferAlignment;
    data_ =
        static_cast<uint8_t *>(std::aligned_alloc(kBufferAlignment, rounded));
    size_ = data_ ? bytes : 0;
    if (data_)
      std::memset(data_, 0, rounded);
    return data_ != nullptr;
  }

  uint8_t *data() const { return data_; }
  size_t size() const { return size_; }

  void swap(AlignedBuffer &other) noexcept {
    std::swap(data_, other.data_);
    std::swap(size_, other.size_);
  }

private:
  uint8_t *data_ = nullptr;
  size_t size_ = 0;
};

} // namespace dtcrt

#endif // DTCRT_CORE_BUFFER_H
