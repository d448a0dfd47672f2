//===- TestUtil.h - helpers shared by the runtime's unit tests ------------===//

#ifndef DTCRT_TEST_UNIT_RUNTIME_TESTUTIL_H
#define DTCRT_TEST_UNIT_RUNTIME_TESTUTIL_H

#include "dtcrt/dtcrt.h"
#include "runtime/src/Core/Files.h"

#include <cstdlib>
#include <string>
#include <vector>

namespace dtcrt::test {

/// A fresh folder under $TMPDIR (or /tmp), removed when the object dies.
class TempFolder {
public:
  TempFolder() {
    const char *base = std::getenv("TMPDIR");
    std::string pattern =
        std::string(base && *base ? base : "/tmp") + "/dtcrt-test-XXXXXX";
    std::vector<char> buffer(pattern.begin(), pattern.end());
    buffer.push_back('\0');
    if (mkdtemp(buffer.data()))
      path_ = buffer.data();
  }
  ~TempFolder() {
    std::string ignored;
    if (!path_.empty())
      removeTree(path_, ignored);
  }
  const std::string &path() const { return path_; }
  std::string operator/(const std::string &name) const {
    return joinPath(path_, name);
  }

private:
  std::string path_;
};

/// A step that does nothing (descriptor tests never run it).
inline void noStep(void *const *, void *const *, dtcrt_step_ctx *) {}

/// A tensor descriptor of rank <= 2.
inline dtcrt_tensor_desc tensor(const char *name, const char *role,
                                const char *dtype, std::vector<int64_t> dims,
                                double defaultValue = 0, int64_t maxValue = 0) {
  dtcrt_tensor_desc d = {};
  d.name = name;
  d.role = role;
  d.dtype = dtype;
  d.rank = int(dims.size());
  for (size_t i = 0; i < dims.size(); ++i)
    d.dims[i] = dims[i];
  d.weights_offset = -1;
  d.default_value = defaultValue;
  d.max_value = maxValue;
  return d;
}

/// A model descriptor over `args` and `results` (kept alive by the caller).
inline dtcrt_model_desc model(const std::vector<dtcrt_tensor_desc> &args,
                              const std::vector<dtcrt_tensor_desc> &results,
                              int64_t globalBatch = 4) {
  dtcrt_model_desc m = {};
  m.name = "test";
  m.num_args = int(args.size());
  m.args = args.data();
  m.num_results = int(results.size());
  m.results = results.data();
  m.arena_bytes = 0;
  m.global_batch = globalBatch;
  m.micro_batch = globalBatch;
  m.step = noStep;
  return m;
}

} // namespace dtcrt::test

#endif // DTCRT_TEST_UNIT_RUNTIME_TESTUTIL_H
