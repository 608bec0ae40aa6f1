# Writes tinygrad_asts.txt: the kernel ASTs tinygrad 7b16fadd schedules for the graphs of
# tinygrad_parity_test.cpp. Run in a tinygrad checkout at that commit:
#   PYTHONPATH=. DEV=CPU python3 tinygrad_asts.py > tinygrad_asts.txt
from tinygrad import Tensor
def E(*s): return Tensor.empty(*s).realize()
cases = {
 "add_const": lambda: E(16)+1,
 "pad_add": lambda: E(4,4).pad(((1,1),(0,0)))+1,
 "matmul": lambda: E(8,16)@E(16,32),
 "sum_axis1": lambda: E(8,16).sum(1),
 "softmax": lambda: E(8,16).softmax(-1),
 "permute_contig": lambda: E(4,6).permute(1,0).contiguous(),
 "conv2d": lambda: E(1,3,8,8).conv2d(E(4,3,3,3)),
}
print("# Kernel ASTs of tinygrad 7b16fadd (DEV=CPU), written by tinygrad_asts.py: `name index<TAB>repr(ast)`.")
for name, f in cases.items():
  for i, si in enumerate(f().schedule()):
    print(f"{name} {i}\t" + "".join(l.strip() for l in repr(si.ast).splitlines()))
