//===- dtc.cpp - the dtc command line -------------------------------------===//
//
// Binds flags to the option structs of compiler/Driver and dispatches to the
// subcommand. The only place command-line flags are declared.
//
//===----------------------------------------------------------------------===//

#include "compiler/Driver/Commands.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/raw_ostream.h"

using namespace llvm;
using namespace mlir::dtc;

static cl::SubCommand importCmd("import", "Import an ONNX model and print it "
                                          "as dtg IR");
static cl::SubCommand interpretCmd(
    "interpret", "Run an ONNX model in the reference interpreter and compare "
                 "its outputs with .npy files");
static cl::SubCommand testOnnxCmd(
    "test-onnx", "Run ONNX backend-test folders (model.onnx + "
                 "test_data_set_*) and report PASS/FAIL/UNSUPPORTED");

// import / interpret
static cl::opt<std::string> modelPath(cl::Positional, cl::desc("MODEL.onnx"),
                                      cl::Required, cl::sub(importCmd),
                                      cl::sub(interpretCmd));
static cl::opt<std::string> outputPath("o", cl::desc("Output file"),
                                       cl::value_desc("OUT.mlir"),
                                       cl::init("-"), cl::sub(importCmd));
static cl::opt<int64_t> batch("batch",
                              cl::desc("Bind axis 0 of every data input"),
                              cl::value_desc("N"), cl::sub(importCmd),
                              cl::sub(interpretCmd));
static cl::list<std::string>
    inputShapes("input-shape",
                cl::desc("Shape of a data input (NAME=DIMxDIM), repeatable"),
                cl::value_desc("NAME=DIMxDIM"), cl::sub(importCmd),
                cl::sub(interpretCmd));
static cl::opt<bool> noCleanup("no-cleanup",
                               cl::desc("Print the importer's output before "
                                        "the clean-up pipeline"),
                               cl::sub(importCmd));
static cl::list<std::string> inputs("input",
                                    cl::desc("Data input (NAME=FILE.npy)"),
                                    cl::value_desc("NAME=FILE.npy"),
                                    cl::sub(interpretCmd));
static cl::list<std::string> expects("expect",
                                     cl::desc("Expected output (NAME=FILE.npy)"),
                                     cl::value_desc("NAME=FILE.npy"),
                                     cl::sub(interpretCmd));
static cl::opt<std::string> outputDir("output-dir",
                                      cl::desc("Write every output as "
                                               "NAME.npy into this folder"),
                                      cl::sub(interpretCmd));
static cl::opt<double> rtol("rtol",
                            cl::desc("Largest relative L2 error accepted"),
                            cl::init(1e-5), cl::sub(interpretCmd));

// test-onnx
static cl::list<std::string> testDirs(cl::Positional, cl::desc("DIR..."),
                                      cl::OneOrMore, cl::sub(testOnnxCmd));
static cl::opt<std::string> target("target",
                                   cl::desc("Where to run: interp or cpu"),
                                   cl::init("interp"), cl::sub(testOnnxCmd));
static cl::opt<unsigned> timeout("timeout",
                                 cl::desc("Seconds one test may run"),
                                 cl::init(120), cl::sub(testOnnxCmd));
static cl::opt<unsigned> memoryMiB("memory-limit-mib",
                                   cl::desc("MiB one test may use"),
                                   cl::init(2048), cl::sub(testOnnxCmd));
static cl::opt<unsigned> jobs("j", cl::desc("Tests run at once"), cl::init(1),
                              cl::sub(testOnnxCmd));
static cl::opt<std::string>
    expectFile("expect-pass",
               cl::desc("File listing tests expected to pass; any that does "
                        "not is a regression (non-zero exit)"),
               cl::sub(testOnnxCmd));
static cl::opt<std::string> filter("filter",
                                   cl::desc("Run only tests whose name "
                                            "contains this"),
                                   cl::sub(testOnnxCmd));

static ShapeOptions shapeOptions() {
  ShapeOptions shapes;
  if (batch.getNumOccurrences())
    shapes.batch = batch;
  shapes.inputShapes.assign(inputShapes.begin(), inputShapes.end());
  return shapes;
}

int main(int argc, char **argv) {
  InitLLVM init(argc, argv);
  cl::ParseCommandLineOptions(argc, argv, "dtc: a compiler for distributed "
                                          "training\n");
  if (importCmd) {
    ImportCommandOptions options;
    options.model = modelPath;
    options.output = outputPath;
    options.shapes = shapeOptions();
    options.noCleanup = noCleanup;
    return runImportCommand(options);
  }
  if (interpretCmd) {
    InterpretCommandOptions options;
    options.model = modelPath;
    options.shapes = shapeOptions();
    options.inputs.assign(inputs.begin(), inputs.end());
    options.expects.assign(expects.begin(), expects.end());
    options.outputDir = outputDir;
    options.rtol = rtol;
    return runInterpretCommand(options);
  }
  if (testOnnxCmd) {
    TestONNXCommandOptions options;
    options.dirs.assign(testDirs.begin(), testDirs.end());
    options.target = target;
    options.timeoutSeconds = timeout;
    options.memoryLimitBytes = uint64_t(memoryMiB) << 20;
    options.jobs = jobs;
    options.expectFile = expectFile;
    options.filter = filter;
    return runTestONNXCommand(options);
  }
  errs() << "dtc: error: no subcommand given; see 'dtc --help'\n";
  return 1;
}
