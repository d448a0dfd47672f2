"""Writes an ONNX node test (model.onnx + test_data_set_0) of Cast to the
8-bit floats and 4-bit integers of opsets 19 and 21, and back to float.

    narrow_casts.py OUTDIR
    narrow_casts.py --add-on-float8 FILE    (an Add of two FLOAT8E4M3FN values)
    narrow_casts.py --float8-input FILE     (an MLP whose input x is FLOAT8E5M2)

The model takes one float32 vector `x` and returns, for each of FLOAT8E4M3FN,
FLOAT8E4M3FNUZ, FLOAT8E5M2, FLOAT8E5M2FNUZ with saturate 1 and 0, and for
INT4 and UINT4, `Cast(Cast(x, to=T), to=FLOAT)`. The inputs are every
representable value of each 8-bit float, every midpoint between two
neighbours (the ties that round to even), the midpoint past the largest
finite value, subnormals, infinities, NaN and random values over the
formats' ranges.

The expected outputs come from ONNX's definition, computed here without
rounding arithmetic: each format's values are listed from its bit fields,
and a cast takes the nearest listed value, a tie going to the one whose
last mantissa bit is 0 (the value after the largest, of the unbounded
format, stands for overflow: infinity or NaN as the format has them, or the
largest value when saturating, as any value beyond it).
"""
import math
import os
import sys

import numpy as np
import onnx
from onnx import helper, numpy_helper, TensorProto

# ONNX data types past Debian's onnx 1.12, which does not name them.
FORMATS = {
    # name: (data type, mantissa bits, bias, kind)
    "FLOAT8E4M3FN": (17, 3, 7, "fn"),
    "FLOAT8E4M3FNUZ": (18, 3, 8, "fnuz"),
    "FLOAT8E5M2": (19, 2, 15, "ieee"),
    "FLOAT8E5M2FNUZ": (20, 2, 16, "fnuz"),
}
UINT4, INT4 = 21, 22


def finite_values(mant, bias, kind):
    """(value, last mantissa bit) of every finite non-negative code."""
    exp_bits = 7 - mant
    out = []
    for code in range(128):
        e, m = code >> mant, code & ((1 << mant) - 1)
        if kind == "ieee" and e == (1 << exp_bits) - 1:
            continue  # infinity, NaN
        if kind == "fn" and code == 127:
            continue  # NaN
        if e == 0:
            v = m * 2.0 ** (1 - bias - mant)
        else:
            v = (1 + m / 2.0**mant) * 2.0 ** (e - bias)
        out.append((v, m & 1))
    return sorted(out)


def cast(x, mant, bias, kind, saturate):
    values = finite_values(mant, bias, kind)
    largest, largest_odd = values[-1]
    # The next value of the format with an unbounded exponent (its last
    # mantissa bit the other way).
    ulp = 2.0 ** (math.floor(math.log2(largest)) - mant)
    beyond = (largest + ulp, 1 - largest_odd)
    overflow = math.inf if kind == "ieee" else math.nan
    if math.isnan(x):
        return math.nan
    sign = -1.0 if math.copysign(1.0, x) < 0 else 1.0
    a = abs(x)
    if saturate and a > largest:
        return sign * largest
    if a >= 2 * beyond[0]:  # (differences this large lose their bits)
        return overflow if kind != "ieee" else sign * math.inf
    best = None
    for v, odd in values + [beyond]:
        d = abs(a - v)
        if best is None or d < best[0] or (d == best[0] and not odd):
            best = (d, v, odd)
    v = best[1]
    if v == beyond[0]:
        return overflow if kind != "ieee" else sign * math.inf
    if v == 0.0 and kind == "fnuz":
        return 0.0
    return sign * v


def int4(x, signed):
    if math.isnan(x):
        return 0.0
    lo, hi = (-8, 7) if signed else (0, 15)
    return float(np.rint(min(max(x, lo), hi)))


def inputs():
    xs = [0.0, -0.0, math.inf, -math.inf, math.nan, 1e-30, -1e-30, 1e30]
    for mant, bias, kind in [f[1:] for f in FORMATS.values()]:
        values = [v for v, _ in finite_values(mant, bias, kind)]
        xs += values
        xs += [(a + b) / 2 for a, b in zip(values, values[1:])]
        ulp = 2.0 ** (math.floor(math.log2(values[-1])) - mant)
        xs += [values[-1] + ulp / 2, values[-1] + ulp / 4,
               values[-1] + ulp * 3 / 4, values[1] / 2, values[1] / 4]
    rng = np.random.default_rng(7)
    xs += list(rng.standard_normal(200) * np.exp2(rng.integers(-20, 17, 200)))
    xs += [v + 0.5 for v in range(-10, 17)] + list(np.linspace(-9, 17, 53))
    xs = np.array(xs, dtype=np.float64)
    xs = np.concatenate([xs, -xs]).astype(np.float32)
    return xs


def write_misuse(kind, path):
    if kind == "--add-on-float8":
        nodes = [helper.make_node("Cast", ["x"], ["x8"], to=17),
                 helper.make_node("Add", ["x8", "x8"], ["s8"]),
                 helper.make_node("Cast", ["s8"], ["y"], to=1)]
        x_type, inits = TensorProto.FLOAT, []
    else:
        nodes = [helper.make_node("Cast", ["x"], ["xf"], to=1),
                 helper.make_node("MatMul", ["xf", "w"], ["y"])]
        x_type = 19
        inits = [numpy_helper.from_array(np.ones((4, 3), np.float32), "w")]
    graph = helper.make_graph(
        nodes, "misuse", [helper.make_tensor_value_info("x", x_type, [2, 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])
    model.ir_version = 10
    onnx.save(model, path)


def main():
    if sys.argv[1].startswith("--"):
        return write_misuse(sys.argv[1], sys.argv[2])
    out = sys.argv[1]
    x = inputs()
    nodes, outputs, expected = [], [], []
    for name, (dtype, mant, bias, kind) in FORMATS.items():
        for saturate in (1, 0):
            y = f"{name}_saturate{saturate}"
            nodes.append(helper.make_node("Cast", ["x"], [y + "_8"], to=dtype,
                                          saturate=saturate))
            nodes.append(helper.make_node("Cast", [y + "_8"], [y], to=1))
            outputs.append(y)
            expected.append([cast(float(v), mant, bias, kind, saturate)
                             for v in x])
    for name, dtype, signed in (("INT4", INT4, True), ("UINT4", UINT4, False)):
        nodes.append(helper.make_node("Cast", ["x"], [name + "_4"], to=dtype))
        nodes.append(helper.make_node("Cast", [name + "_4"], [name], to=1))
        outputs.append(name)
        expected.append([int4(float(v), signed) for v in x])
    graph = helper.make_graph(
        nodes, "narrow_casts",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [len(x)])],
        [helper.make_tensor_value_info(o, TensorProto.FLOAT, [len(x)])
         for o in outputs])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])
    model.ir_version = 10
    data = os.path.join(out, "test_data_set_0")
    os.makedirs(data, exist_ok=True)
    onnx.save(model, os.path.join(out, "model.onnx"))
    with open(os.path.join(data, "input_0.pb"), "wb") as f:
        f.write(numpy_helper.from_array(x, "x").SerializeToString())
    for i, (o, e) in enumerate(zip(outputs, expected)):
        with open(os.path.join(data, f"output_{i}.pb"), "wb") as f:
            f.write(numpy_helper.from_array(np.array(e, dtype=np.float32),
                                            o).SerializeToString())
    ties = sum(1 for v in x if np.isfinite(v))
    print(f"{len(x)} inputs ({ties} finite), {len(outputs)} outputs")


if __name__ == "__main__":
    main()
