# -*- Python -*-
import os
import platform

import lit.formats
from lit.llvm import llvm_config

config.name = "dtc"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".test"]
config.excludes = ["Inputs", "CMakeLists.txt", "README.md", "lit.cfg.py",
                   "lit.site.cfg.py", "bench"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.dtc_obj_root, "test")

config.substitutions.append(("%PATH%", config.environment["PATH"]))
config.substitutions.append(("%dtc_src", config.dtc_src_root))
# Debian's PyTorch and ONNX import only under the system Python.
config.substitutions.append(("%syspython", "/usr/bin/python3"))
config.substitutions.append(("%testdata", "/usr/share/libonnx-testdata/data"))

llvm_config.with_system_environment(["HOME", "TMPDIR", "DTC_TEST_REPORT", "DTC_TEST_ENSEMBLE"])
llvm_config.use_default_substitutions()
llvm_config.with_environment("PATH", config.dtc_tools_dir, append_path=True)
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)
for var in ["OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS"]:
    config.environment[var] = "1"
# Runs over several ranks (DESIGN.md section 4): OpenMPI's mpirun, as root
# in containers, more ranks than cores.
config.environment.update({
    "OMPI_ALLOW_RUN_AS_ROOT": "1",
    "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1",
    "OMPI_MCA_rmaps_base_oversubscribe": "1",
})
config.substitutions.append(("%mpirun", "mpirun --oversubscribe"))

# Wall-clock figures that hold only on cores no other test shares (the
# pipeline bubble at one core per rank): held where the tests run alone
# (scripts/test.sh runs them so, with --param alone=1), else printed.
config.substitutions.append(
    ("%wall_clock", "held" if lit_config.params.get("alone") else "printed"))

# %{im2col} COMMAND runs COMMAND (a train, or mpirun and its ranks) with the
# convolutions through im2col and a GEMM instead of oneDNN's primitives
# (NN.h, ConvLibrary.h). The tests that hold two float32 runs of the CNN
# example against each other over 20 steps at 1e-4 (meshes, pipelines and
# importers against one rank) take it: that trajectory passes ReLU and
# max-pool near-ties that one float32 rounding flips (tolerance.py), after
# which two runs that differ only in summation order part by 1e-4 to 3e-3.
# With im2col the runs of each test stay on the same side on AVX-512 and
# AVX2 CPUs (DTC_TEST_ISA=avx2); with oneDNN's kernels, whose summation
# order differs with the batch a rank holds, some fall on the other
# (pipeline-parallel-cnn's 4x1x2 gpipe at step 11 on AVX2, tensor-parallel's
# 2x4x1 at step 12 on AVX-512). What they test is the sharding, schedule or
# importer, not the convolution: oneDNN's is held against the definition
# (test/unit/kernels/nn.cpp) and trained against PyTorch by
# compile-train-cnn.test, torchscript-resnet18.test and zoo-classics-train.test.
config.substitutions.append(("%{im2col}", "env DTCK_CONV=im2col"))
# Where a machine sets OpenBLAS's core type (some CPUs need it for a correct
# OpenBLAS), the tests run as every other program on it does.
llvm_config.with_system_environment(["OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE"])

# DTC_TEST_ISA=avx2 (scripts/test.sh --isa avx2) runs the suite as on an
# x86-64 CPU without AVX-512, whatever this one has: OpenBLAS's Haswell
# kernels (for dtc and for the PyTorch and NumPy references, which use the
# same OpenBLAS), PyTorch's and oneDNN's AVX2 code paths, and generated code
# built for x86-64-v3 (dtc compile's default via $DTC_CPU_ARCH).
test_isa = os.environ.get("DTC_TEST_ISA", "native")
if test_isa == "avx2":
    config.environment.update({
        "OPENBLAS_CORETYPE": "Haswell",
        "ATEN_CPU_CAPABILITY": "avx2",
        "ONEDNN_MAX_CPU_ISA": "AVX2",
        "DNNL_MAX_CPU_ISA": "AVX2",
        "DTC_CPU_ARCH": "x86-64-v3",
    })
elif test_isa != "native":
    lit_config.fatal("DTC_TEST_ISA must be native or avx2, got '%s'" %
                     test_isa)
else:
    config.environment.pop("DTC_CPU_ARCH", None)

# Tests that name x86-64 CPU levels say `REQUIRES: x86_64`.
if platform.machine() in ("x86_64", "AMD64"):
    config.available_features.add("x86_64")

# CUDA's compiler (every machine of this project has CUDA 13 at
# /usr/local/cuda, without a GPU): tests that build with nvcc say
# `REQUIRES: nvcc`.
if os.path.exists("/usr/local/cuda/bin/nvcc"):
    config.available_features.add("nvcc")

tool_dirs = [config.dtc_tools_dir, config.llvm_tools_dir]
llvm_config.add_tool_substitutions(["dtc", "dtc-opt"], tool_dirs)

# The importer's libFuzzer target, built by scripts/fuzz.sh in its own clang
# tree; tests that run it say `REQUIRES: fuzzer`.
fuzzer = os.path.join(config.dtc_src_root, "build-fuzz", "bin",
                      "dtc-import-fuzzer")
if os.path.exists(fuzzer):
    config.available_features.add("fuzzer")
    config.substitutions.append(("%dtc_import_fuzzer", fuzzer))
