//===- StepLoops.cpp - repeated ops of a step printed as loops ------------===//

#include "compiler/Target/CPU/StepLoops.h"

#include "compiler/Target/CPU/KernelEmitter.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/ADT/Twine.h"

#include <optional>

using namespace mlir;
using namespace mlir::dtc::cpu;

namespace {
constexpr char kHoleBegin = '\x01';
constexpr char kHoleEnd = '\x02';
/// The longest period looked for (ops of one repetition).
constexpr size_t kMaxPeriod = 4096;
/// A loop is printed where it saves at least this many ops' code.
constexpr size_t kMinSaved = 3;

/// `period` ops from `start`, `count` times.
struct Run {
  size_t start, period, count;
};
} // namespace

std::string mlir::dtc::cpu::slotHole(unsigned k) {
  return kHoleBegin + std::to_string(k) + kHoleEnd;
}
std::string mlir::dtc::cpu::labelHole() {
  return std::string{kHoleBegin, 'L', kHoleEnd};
}
std::string mlir::dtc::cpu::positionHole() {
  return std::string{kHoleBegin, 'N', kHoleEnd};
}

/// The expression of a buffer's address given the text of its index.
static std::string addressOf(BufferSlot::Kind kind, StringRef index) {
  switch (kind) {
  case BufferSlot::Arena:
    return (Twine("arena + ") + index).str();
  case BufferSlot::Arg:
    return (Twine("args[") + index + "]").str();
  case BufferSlot::Result:
    return (Twine("results[") + index + "]").str();
  }
  llvm_unreachable("a buffer slot's kind");
}

std::string BufferSlot::expression() const {
  return addressOf(kind, std::to_string(index));
}

/// `text` with each hole replaced by `fill(name)` (a slot's number, "L" or
/// "N").
static std::string fillHoles(StringRef text,
                             function_ref<std::string(StringRef)> fill) {
  std::string out;
  for (size_t begin; (begin = text.find(kHoleBegin)) != StringRef::npos;) {
    size_t end = text.find(kHoleEnd, begin);
    out += text.take_front(begin);
    out += fill(text.slice(begin + 1, end));
    text = text.drop_front(end + 1);
  }
  return out + text.str();
}

static void printStraight(const OpCode &op, llvm::raw_ostream &os) {
  os << "  // " << op.comment << "\n";
  os << fillHoles(op.text, [&](StringRef hole) -> std::string {
    if (hole == "L")
      return KernelEmitter::quoted(op.label);
    if (hole == "N")
      return std::to_string(op.position);
    return op.slots[std::stoul(hole.str())].expression();
  });
}

/// Runs of ops whose code repeats, left to right: at each op, the period
/// that saves the most code (the shortest of equals), if it saves enough.
static std::vector<Run> findRuns(ArrayRef<OpCode> ops) {
  llvm::StringMap<unsigned> ids;
  std::vector<unsigned> seq;
  for (const OpCode &op : ops)
    seq.push_back(ids.try_emplace(op.text, ids.size()).first->second);
  std::vector<Run> runs;
  size_t n = seq.size();
  for (size_t i = 0; i < n;) {
    Run best{i, 1, 1};
    size_t bestSaved = 0;
    for (size_t period = 1; period <= std::min((n - i) / 2, kMaxPeriod);
         ++period) {
      size_t same = 0;
      while (i + period + same < n && seq[i + same] == seq[i + period + same])
        ++same;
      size_t count = 1 + same / period;
      size_t saved = period * (count - 1);
      if (count >= 2 && saved > bestSaved) {
        best = Run{i, period, count};
        bestSaved = saved;
      }
    }
    if (bestSaved >= kMinSaved) {
      runs.push_back(best);
      i += best.period * best.count;
    } else {
      ++i;
    }
  }
  return runs;
}

namespace {
/// A label cut at its decimal numbers: the text around them, the numbers.
struct LabelParts {
  SmallVector<std::string> text;
  SmallVector<int64_t> numbers;
};
} // namespace

static LabelParts splitLabel(StringRef label) {
  LabelParts parts;
  parts.text.emplace_back();
  for (size_t k = 0; k < label.size();) {
    size_t end = k;
    while (end < label.size() && llvm::isDigit(label[end]))
      ++end;
    if (end == k) {
      parts.text.back() += label[k++];
      continue;
    }
    StringRef digits = label.slice(k, end);
    int64_t value;
    // Only numbers that print back the same (no leading zeros).
    if (digits.size() > 15 || (digits.size() > 1 && digits[0] == '0') ||
        digits.getAsInteger(10, value)) {
      parts.text.back() += digits.str();
    } else {
      parts.numbers.push_back(value);
      parts.text.emplace_back();
    }
    k = end;
  }
  return parts;
}

/// `first + i * step` as C++ (over the loop's `i`).
static std::string progression(int64_t first, int64_t step) {
  if (step == 0)
    return std::to_string(first);
  return "(" + std::to_string(first) + " + i * " + std::to_string(step) + ")";
}

/// Whether `values` are `values[0] + i * step` for some step; sets `step`.
static bool isProgression(ArrayRef<int64_t> values, int64_t &step) {
  step = values.size() > 1 ? values[1] - values[0] : 0;
  for (size_t i = 1; i < values.size(); ++i)
    if (values[i] - values[i - 1] != step)
      return false;
  return true;
}

/// Op `j` of repetition `iteration` of `run`.
static const OpCode &opAt(ArrayRef<OpCode> ops, const Run &run,
                          size_t iteration, size_t j) {
  return ops[run.start + iteration * run.period + j];
}

/// Prints `l`, the labels of ops `labelOps` of a run's period, row by row:
/// where each differs from the first only in numbers that step evenly (every
/// layer's "/h.N/attn/MatMul"), from patterns expanded once at run time
/// (expandLabels); else all of them.
static void printLabels(ArrayRef<OpCode> ops, const Run &run,
                        ArrayRef<size_t> labelOps, llvm::raw_ostream &os) {
  if (labelOps.empty())
    return;
  std::vector<std::string> patterns;
  std::vector<int64_t> fields;
  for (size_t j : labelOps) {
    LabelParts first = splitLabel(opAt(ops, run, 0, j).label);
    std::vector<std::vector<int64_t>> numbers(first.numbers.size());
    bool even = true;
    for (size_t it = 0; it < run.count && even; ++it)
      even = !StringRef(opAt(ops, run, it, j).label).contains('\x01');
    for (size_t it = 0; it < run.count && even; ++it) {
      LabelParts parts = splitLabel(opAt(ops, run, it, j).label);
      even = parts.text == first.text;
      for (size_t f = 0; f < numbers.size() && even; ++f)
        numbers[f].push_back(parts.numbers[f]);
    }
    for (size_t f = 0; f < numbers.size() && even; ++f) {
      int64_t step;
      even = isProgression(numbers[f], step);
      fields.push_back(numbers[f][0]);
      fields.push_back(step);
    }
    if (!even) {
      patterns.clear();
      break;
    }
    // (Each number's place a \001, which no label holds.)
    patterns.push_back(KernelEmitter::quoted(llvm::join(first.text, "\x01")));
  }
  if (!patterns.empty()) {
    os << "    static const char *const lp[] = {" << llvm::join(patterns, ", ")
       << "};\n";
    os << "    static const int64_t lf[] = {";
    for (auto [k, f] : llvm::enumerate(fields))
      os << (k ? ", " : "") << f;
    os << (fields.empty() ? "0" : "") << "};\n";
    os << "    static const char *const *l = expandLabels(" << run.count << ", "
       << labelOps.size() << ", lp, lf);\n";
  } else {
    os << "    static const char *const l[] = {";
    for (size_t it = 0; it < run.count; ++it)
      for (size_t j : labelOps)
        os << (it || j != labelOps.front() ? ",\n      " : "\n      ")
           << KernelEmitter::quoted(opAt(ops, run, it, j).label);
    os << "};\n";
  }
}

static void printRun(ArrayRef<OpCode> ops, const Run &run,
                     llvm::raw_ostream &os) {
  // What fills each op's holes: an expression over `i`, from a progression
  // or from the table `t` (a row per iteration) or the labels `l`.
  std::vector<std::vector<std::string>> slotFill(run.period);
  std::vector<std::string> positionFill(run.period);
  // Each op's row in `l`, if its label varies.
  std::vector<std::optional<size_t>> labelRow(run.period);
  std::vector<std::vector<int64_t>> columns;
  std::vector<size_t> labelOps;
  // `values` as an expression over the row `r`: a column of the table, or
  // one already there plus a constant (a buffer's neighbour in the arena,
  // the same buffer read twice).
  auto column = [&](std::vector<int64_t> values) -> std::string {
    for (auto [c, other] : llvm::enumerate(columns)) {
      int64_t delta = values[0] - other[0];
      bool same = true;
      for (size_t it = 1; it < values.size() && same; ++it)
        same = values[it] - other[it] == delta;
      if (same)
        return "r[" + std::to_string(c) + "]" +
               (delta == 0 ? "" : " + " + std::to_string(delta));
    }
    columns.push_back(std::move(values));
    return "r[" + std::to_string(columns.size() - 1) + "]";
  };
  for (size_t j = 0; j < run.period; ++j) {
    const OpCode &first = opAt(ops, run, 0, j);
    for (size_t k = 0; k < first.slots.size(); ++k) {
      SmallVector<int64_t> values;
      bool sameKind = true;
      for (size_t it = 0; it < run.count; ++it) {
        const BufferSlot &slot = opAt(ops, run, it, j).slots[k];
        values.push_back(slot.index);
        sameKind &= slot.kind == first.slots[k].kind;
      }
      BufferSlot::Kind kind = first.slots[k].kind;
      int64_t step;
      if (sameKind && isProgression(values, step)) {
        slotFill[j].push_back(addressOf(kind, progression(values[0], step)));
        continue;
      }
      // The first layer's buffer apart, then a progression (the embedding
      // feeds the first block; each later one, the block before).
      if (sameKind && run.count > 2 &&
          isProgression(ArrayRef(values).drop_front(), step)) {
        slotFill[j].push_back(
            addressOf(kind, "(i == 0 ? " + std::to_string(values[0]) + " : " +
                                progression(values[1] - step, step) + ")"));
        continue;
      }
      std::vector<int64_t> codes;
      for (size_t it = 0; it < run.count; ++it) {
        const BufferSlot &slot = opAt(ops, run, it, j).slots[k];
        codes.push_back(slot.index * 4 + slot.kind);
      }
      slotFill[j].push_back("slotAddress(arena, args, results, " +
                            column(std::move(codes)) + ")");
    }
    SmallVector<int64_t> positions;
    bool sameLabel = true;
    for (size_t it = 0; it < run.count; ++it) {
      positions.push_back(opAt(ops, run, it, j).position);
      sameLabel &= opAt(ops, run, it, j).label == first.label;
    }
    // (Only guarded ops print their position.)
    bool printsPosition = StringRef(first.text).contains(positionHole());
    int64_t step;
    if (printsPosition && isProgression(positions, step))
      positionFill[j] = progression(positions[0], step);
    else if (printsPosition)
      positionFill[j] = column({positions.begin(), positions.end()});
    if (!sameLabel) {
      labelRow[j] = labelOps.size();
      labelOps.push_back(j);
    }
  }

  os << "  // " << run.period << " ops, " << run.count
     << " times over other buffers (as the straight calls would run)\n";
  os << "  {\n";
  if (!columns.empty()) {
    os << "    static const int64_t t[] = {";
    for (size_t it = 0; it < run.count; ++it)
      for (size_t c = 0; c < columns.size(); ++c)
        os << (c == 0 ? (it == 0 ? "\n      " : ",\n      ") : ", ")
           << columns[c][it];
    os << "};\n";
  }
  printLabels(ops, run, labelOps, os);
  os << "    for (int64_t i = 0; i < " << run.count << "; ++i) {\n";
  if (!columns.empty())
    os << "      const int64_t *r = t + i * " << columns.size() << ";\n";
  for (size_t j = 0; j < run.period; ++j) {
    const OpCode &first = opAt(ops, run, 0, j);
    os << "      // " << first.opName << "\n";
    std::string body = fillHoles(first.text, [&](StringRef hole) {
      if (hole == "L")
        return labelRow[j] ? "l[i * " + std::to_string(labelOps.size()) +
                                 " + " + std::to_string(*labelRow[j]) + "]"
                           : KernelEmitter::quoted(first.label);
      if (hole == "N")
        return positionFill[j];
      return slotFill[j][std::stoul(hole.str())];
    });
    // Indented two levels more than the straight code.
    for (StringRef line : llvm::split(StringRef(body).rtrim('\n'), '\n'))
      os << "    " << line << "\n";
  }
  os << "    }\n  }\n";
}

void mlir::dtc::cpu::printSteps(ArrayRef<OpCode> ops, bool roll,
                                llvm::raw_ostream &os) {
  size_t next = 0;
  for (const Run &run : roll ? findRuns(ops) : std::vector<Run>()) {
    for (; next < run.start; ++next)
      printStraight(ops[next], os);
    printRun(ops, run, os);
    next = run.start + run.period * run.count;
  }
  for (; next < ops.size(); ++next)
    printStraight(ops[next], os);
}
