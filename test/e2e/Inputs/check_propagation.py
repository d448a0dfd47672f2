"""Checks sharding propagation over a training step (dtc-propagate-sharding).

Usage: check_propagation.py add-mesh IN.mlir OUT.mlir INPUT=AXES ...
           Inserts `dist.mesh @mesh = <["pp" = 1, "dp" = 2, "tp" = 2]>` and,
           on each named data input of @main, a sharding splitting its axis 0
           over AXES (as `--shard INPUT=AXES` would).
       check_propagation.py megatron IN.mlir OUT.mlir TP
           Inserts a mesh of tp=TP and, on every GPT block's MLP weights,
           Megatron's splits: c_fc's output features (its rows, [out, in])
           and c_proj's input features (its columns) over tp.
       check_propagation.py check PROPAGATED.mlir AXIS
           Checks @micro_step: every gradient it returns and its loss sum and
           count are partial sums over AXIS (the batch was split over it, and
           each is a sum over the batch), and the forward's activations
           (values with a leading dimension of the micro-batch's size) are
           split over AXIS along it. Prints the counts, then OK or FAIL.
"""
import re
import sys


def add_mesh(src, dst, specs):
    text = open(src).read()
    text = text.replace(
        "module {",
        'module {\n  dist.mesh @mesh = <["pp" = 1, "dp" = 2, "tp" = 2]>', 1)
    for spec in specs:
        name, axes = spec.split("=")
        quoted = ", ".join('"%s"' % a for a in axes.split("+"))
        pattern = re.compile(r'(%arg\d+: tensor<(\d+)((?:x\d+)*)x?\w+> \{)'
                             r'(dtg\.name = "' + re.escape(name) + '")')

        def insert(m):
            rank = 1 + m.group(3).count("x")
            dims = ", ".join(["{%s}" % quoted] + ["{}"] * (rank - 1))
            return (m.group(1) + "dist.sharding = #dist.sharding<@mesh, [" +
                    dims + "]>, " + m.group(4))
        text, n = pattern.subn(insert, text, count=1)
        if n != 1:
            sys.exit("check_propagation.py: no input '%s'" % name)
    open(dst, "w").write(text)
    return 0


def megatron(src, dst, tp):
    text = open(src).read()
    text = text.replace(
        "module {",
        'module {\n  dist.mesh @mesh = <["pp" = 1, "dp" = 1, "tp" = %s]>' % tp,
        1)
    for name, spec in ((r"transformer\.h\.\d+\.mlp\.c_fc\.weight",
                        '[{"tp"}, {}]'),
                       (r"transformer\.h\.\d+\.mlp\.c_proj\.weight",
                        '[{}, {"tp"}]')):
        text, n = re.subn(
            r'(%arg\d+: tensor<[0-9x]+xf32> \{)(dtg\.initial = [^}]*'
            r'dtg\.name = "' + name + '")',
            r"\1dist.sharding = #dist.sharding<@mesh, " + spec + r">, \2",
            text)
        if n == 0:
            sys.exit("check_propagation.py: no parameter matches " + name)
    open(dst, "w").write(text)
    return 0


def check(path, axis):
    text = open(path).read()
    start = text.index("func.func private @micro_step(")
    body = text[start:text.index("\n  }", start)]
    defs = {}
    for line in body.splitlines():
        if " = " not in line or not line.strip().startswith("%"):
            continue
        for name in re.findall(r"%\w+", line.split(" = ")[0]):
            defs[name] = line
    ret = re.search(r"\n\s*return (.*) :", body).group(1).split(", ")
    sig = body.splitlines()[0]
    roles = re.findall(r'dtg\.role = "(\w+)"\}', sig.split(") -> (")[1])
    problems, partial = [], 0
    for operand, role in zip(ret, roles):
        if role not in ("loss_sum", "loss_count", "gradient"):
            continue
        line = defs.get(operand.split("#")[0], "")
        if 'partial = {"%s"}' % axis in line:
            partial += 1
        elif "dtg.constant" in line:
            partial += 1  # a count known statically (each rank's its own)
        else:
            problems.append("%s (%s) is not a partial sum over %s: %s" % (
                operand, role, axis, line.strip()[:160]))
    wanted = sum(1 for r in roles if r in ("loss_sum", "loss_count",
                                           "gradient"))
    split = len(re.findall(r'dtc\.shardings = \[#dist\.sharding<@mesh, \[\{"%s"\}'
                           % axis, body))
    print("%d of %d sums over the batch are partial over %s; %d values split "
          "over %s along their first dimension" % (partial, wanted, axis,
                                                   split, axis))
    if split == 0:
        problems.append("no value is split over %s" % axis)
    for p in problems:
        print("  " + p)
    print("FAIL" if problems else "OK")
    return 1 if problems else 0


def main(argv):
    if argv[1] == "add-mesh":
        return add_mesh(argv[2], argv[3], argv[4:])
    if argv[1] == "megatron":
        return megatron(argv[2], argv[3], argv[4])
    if argv[1] == "check":
        return check(argv[2], argv[3])
    sys.exit("usage: check_propagation.py add-mesh|check ...")


if __name__ == "__main__":
    sys.exit(main(sys.argv))
