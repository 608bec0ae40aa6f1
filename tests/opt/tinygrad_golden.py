# Records what tinygrad's Kernel computes for kernel ASTs, so that test_opt compares tunebed's
# Kernel with it. Regenerate with tinygrad at the seed commit:
#   git -C /work/.mirror/tinygrad+tinygrad/repo worktree add /tmp/tg-opt 7b16fadd
#   cd /tmp/tg-opt && PYTHONPATH=. python3 /work/main/tests/opt/tinygrad_golden.py \
#       /work/main/tests/data/sops-sample.txt > /work/main/tests/opt/data/sops-golden.txt
#   cd /tmp/tg-opt && PYTHONPATH=. python3 /work/main/tests/opt/tinygrad_golden.py \
#       /work/main/tests/opt/data/kernels.txt > /work/main/tests/opt/data/kernels-golden.txt
# An input line is a kernel AST in tinygrad's repr, optionally after a name ("matmul_64 UOp(...)").
# One output line per kernel, fields separated by " | ":
#   name or line number | full shape | axis letters | cpu hand-coded opts | cpu shape after |
#   gpu opts | gpu shape after | gpu name | gpu buffer trackers after (";"-separated)
# where cpu is ClangRenderer and gpu is OpenCLRenderer (locals and shared memory, no tensor
# cores). For a named kernel, one more field: the gpu optimized AST with its SINK arg dropped.
import re, sys
from tinygrad.helpers import ansistrip
from tinygrad.uop.ops import UOp, Ops, AxisType
from tinygrad.dtype import dtypes
from tinygrad.shape.shapetracker import ShapeTracker
from tinygrad.shape.view import View
from tinygrad.opt.kernel import Kernel, Opt, OptOps
from tinygrad.opt.heuristic import hand_coded_optimizations
from tinygrad.renderer.cstyle import ClangRenderer, OpenCLRenderer

letters = {AxisType.GLOBAL: "g", AxisType.LOCAL: "l", AxisType.LOOP: "L", AxisType.UPCAST: "u",
           AxisType.GROUP_REDUCE: "G", AxisType.REDUCE: "R", AxisType.UNROLL: "r"}
env = {"UOp": UOp, "Ops": Ops, "dtypes": dtypes, "ShapeTracker": ShapeTracker, "View": View, "Opt": Opt, "OptOps": OptOps,
       "KernelInfo": lambda **kw: None, "inf": float("inf"), "nan": float("nan")}

def shape(k): return "(" + ", ".join(str(s) if isinstance(s, int) else s.render() for s in k.full_shape) + ")"
def types(k): return "".join(letters[t] for t in k.axis_types)
def opts(lst): return ",".join(f"{o.op.name}:{o.axis}:{o.arg}" for o in lst) or "-"

for n, line in enumerate(open(sys.argv[1]), 1):
  if not line.strip(): continue
  try:
    name, text = (str(n), line.strip()) if line.startswith("UOp(") else line.strip().split(" ", 1)
    ast = eval(text, env)
    fields = [name]
    for i, renderer in enumerate([ClangRenderer(), OpenCLRenderer()]):
      k = Kernel(ast, renderer)
      if i == 0: fields += [shape(k), types(k)]
      hc = hand_coded_optimizations(k)
      k.apply_opts(hc)
      fields += [opts(hc), shape(k) + " " + types(k)]
    fields += [re.sub("n[0-9]+$", "", ansistrip(k.name)), ";".join(repr(st) for st in k.sts[:len(k.bufs)]).replace("\n", " ")]
    if name != str(n): fields.append(repr(k.get_optimized_ast().replace(arg=None)).replace("\n", " "))
    print(" | ".join(fields))
  except Exception as e:
    print(f"{n} | skipped: {type(e).__name__}: {str(e)[:150]}", file=sys.stderr)
