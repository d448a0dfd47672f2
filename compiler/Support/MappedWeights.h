//===- MappedWeights.h - weight files mapped, not copied ----------*- C++
//-*-===//
//
// A model's weights stay in its files: ONNX external data is mapped into
// memory, and the importer's resource blobs point into the mapping (which
// they keep alive) instead of holding a copy. Writing weights.bin then
// streams from the mapping and hands each range's pages back, so dtc's
// resident memory does not grow with the weights.
//
//===----------------------------------------------------------------------===//

#ifndef DTC_COMPILER_SUPPORT_MAPPEDWEIGHTS_H
#define DTC_COMPILER_SUPPORT_MAPPEDWEIGHTS_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include <memory>
#include <string>

namespace mlir::dtc {

/// A file mapped read-only into memory, for as long as one holds it.
class MappedFile {
public:
  virtual ~MappedFile() = default;
  virtual llvm::ArrayRef<char> data() const = 0;
};

/// Maps the file at `path` read-only (one mapping per file while any holder
/// lives); null with a message in `error` if it cannot. An empty file maps
/// to an empty range.
std::shared_ptr<MappedFile> mapWeightsFile(llvm::StringRef path,
                                           std::string &error);

/// Drops the resident pages wholly inside `data` if `data` lies in a file
/// mapped by mapWeightsFile (the file still holds them: a later read brings
/// them back); memory anywhere else is left alone.
void releaseMappedPages(llvm::ArrayRef<char> data);

} // namespace mlir::dtc

#endif // DTC_COMPILER_SUPPORT_MAPPEDWEIGHTS_H
