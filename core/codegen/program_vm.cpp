// The program VM (program_vm.hpp): a checked pass over the list, then one run per core id.
#include "core/codegen/program_vm.hpp"

#include <algorithm>
#include <deque>
#include <map>
#include <string>

#include "core/codegen/wmma.hpp"
#include "core/ir/exec_alu.hpp"
#include "core/shape/sint.hpp"

namespace tunebed {

namespace {

// A uop's value. Numbers: `lanes`. Pointers: `memory` (an index into the VM's memories) and, for
// an INDEX, the element offset of each address in `lanes` and whether it may be accessed in
// `gates`.
struct Value {
  std::vector<ConstValue> lanes;
  int memory = -1;
  std::vector<bool> gates;
};

struct Memory {
  std::string name;  // as the C renderer names it: data0, acc0
  HostBuffer* data;
};

ConstValue zero(DType d) { return ConstValue::integer(d, 0); }

ConstValue read(const HostBuffer& b, int64_t i) {
  return b.dtype.is_float() ? ConstValue::real(b.dtype, b.get_float(i))
                            : ConstValue::integer(b.dtype, b.get_int(i));
}

void write(HostBuffer& b, int64_t i, const ConstValue& v) {
  if (v.dtype.is_float())
    b.set_float(i, v.f);
  else
    b.set_int(i, v.i);
}

class ProgramVM {
 public:
  ProgramVM(const std::vector<UOp>& uops, const std::vector<HostBuffer*>& bufs,
            const std::vector<int32_t>& var_values)
      : uops_(uops),
        values_(uops.size()),
        src_pos_(uops.size()),
        jump_(uops.size(), 0),
        loop_end_(uops.size(), 0) {
    if (uops.empty() || uops.back().op() != Ops::SINK)
      throw ProgramVMError("program VM: the list does not end with a SINK");
    std::map<const UOpNode*, size_t> pos;
    std::vector<size_t> open;  // RANGE positions, innermost last
    std::vector<size_t> vars;  // DEFINE_VAR positions
    for (size_t i = 0; i < uops.size(); i++)
      guarded(i, [&] {
        const UOp& u = uops[i];
        for (const UOp& s : u.src()) {
          auto it = pos.find(s.get());
          if (it == pos.end())
            fail(i, "reads a " + std::string(op_name(s.op())) + " that is not computed before it");
          src_pos_[i].push_back(it->second);
        }
        pos.emplace(u.get(), i);
        if (u.op() == Ops::RANGE) open.push_back(i);
        if (u.op() == Ops::ENDRANGE) {
          if (open.empty() || uops[open.back()] != u.src(0)) fail(i, "does not end the innermost open loop");
          jump_[i] = open.back();
          jump_[open.back()] = i;
          open.pop_back();
        }
        if (u.op() == Ops::DEFINE_GLOBAL) bind_global(i, bufs);
        if (u.op() == Ops::DEFINE_REG) bind_register(i);
        if (u.op() == Ops::DEFINE_VAR) vars.push_back(i);
        if (u.op() == Ops::SPECIAL && u.arg().as_tuple().at(0).as_string() == "core_id") {
          const sint n = sint_from_arg(u.arg().as_tuple().at(1));
          if (!n.is_int()) fail(i, "splits the kernel over a symbolic number of cores");
          num_cores_ = n.to_int();
        }
      });
    if (!open.empty()) fail(open.back(), "is a loop that never ends (no ENDRANGE)");
    bind_vars(vars, var_values);
  }

  void run() {
    for (core_id_ = 0; core_id_ < num_cores_; core_id_++) {
      // Registers are the kernel's locals: uninitialized in each run, poisoned here.
      for (size_t r = 0; r < registers_.size(); r++)
        std::fill(registers_[r].bytes.begin(), registers_[r].bytes.end(), std::byte{0xff});
      for (size_t pc = 0; pc < uops_.size(); pc++) pc = guarded(pc, [&] { return step(pc); });
    }
  }

 private:
  [[noreturn]] void fail(size_t pc, const std::string& what) const {
    const UOp& u = uops_[pc];
    throw ProgramVMError("program VM: uop " + std::to_string(pc) + " (" + std::string(op_name(u.op())) + " " +
                         to_string(u.dtype()) + ") " + what);
  }

  // f() for the uop at pc, with what throws below the VM (a malformed arg, an op exec_alu does not
  // have for the dtype) reported as the VM's error at that uop.
  template <class F>
  auto guarded(size_t pc, F&& f) -> decltype(f()) {
    try {
      return f();
    } catch (const ProgramVMError&) {
      throw;
    } catch (const std::exception& e) {
      fail(pc, std::string("failed: ") + e.what());
    }
  }

  void bind_global(size_t pc, const std::vector<HostBuffer*>& bufs) {
    const UOp& u = uops_[pc];
    const int64_t i = u.arg().as_int();
    if (i < 0 || static_cast<size_t>(i) >= bufs.size() || !bufs[i])
      fail(pc, "is buffer " + std::to_string(i) + ", but " + std::to_string(bufs.size()) + " were given");
    if (bufs[i]->dtype != u.dtype().base())
      fail(pc,
           "is a buffer of " + to_string(u.dtype().base()) + ", given one of " + to_string(bufs[i]->dtype));
    if (bufs[i]->numel() < u.dtype().size)
      fail(pc, "needs " + std::to_string(u.dtype().size) + " elements, given " +
                   std::to_string(bufs[i]->numel()));
    values_[pc].memory = static_cast<int>(memories_.size());
    memories_.push_back({"data" + std::to_string(i), bufs[i]});
  }

  void bind_register(size_t pc) {
    const UOp& u = uops_[pc];
    registers_.emplace_back(u.dtype().base().scalar_type(),
                            std::max<int64_t>(u.dtype().size, 1) * u.dtype().count);
    values_[pc].memory = static_cast<int>(memories_.size());
    memories_.push_back({"acc" + std::to_string(u.arg().as_int()), &registers_.back()});
  }

  void bind_vars(std::vector<size_t> vars, const std::vector<int32_t>& var_values) {
    auto name = [&](size_t pc) { return uops_[pc].arg().as_tuple().at(0).as_string(); };
    std::sort(vars.begin(), vars.end(), [&](size_t a, size_t b) { return name(a) < name(b); });
    for (size_t k = 0; k < vars.size(); k++) {
      const size_t pc = vars[k];
      if (k >= var_values.size())
        fail(pc, "is variable " + name(pc) + ", but only " + std::to_string(var_values.size()) +
                     " values were given");
      const ArgTuple& bounds = uops_[pc].arg().as_tuple();
      if (var_values[k] < bounds.at(1).as_int() || var_values[k] > bounds.at(2).as_int())
        fail(pc,
             "is variable " + name(pc) + ", given " + std::to_string(var_values[k]) + ", outside its bounds");
      values_[pc].lanes = {ConstValue::integer(uops_[pc].dtype(), var_values[k])};
    }
  }

  const Value& in(size_t pc, size_t i) const { return values_[src_pos_[pc].at(i)]; }

  // Source i's lanes as a number (not a pointer).
  const std::vector<ConstValue>& number(size_t pc, size_t i) const {
    const Value& v = in(pc, i);
    if (v.memory >= 0 || v.lanes.empty()) fail(pc, "needs a number as source " + std::to_string(i));
    return v.lanes;
  }

  // Executes uops_[pc] and returns the position it ends at (the loop jumps move it).
  size_t step(size_t pc) {
    const UOp& u = uops_[pc];
    Value& out = values_[pc];
    switch (u.op()) {
      case Ops::DEFINE_GLOBAL:
      case Ops::DEFINE_REG:
      case Ops::DEFINE_VAR:
      case Ops::NOOP:
      case Ops::SINK:
        return pc;
      case Ops::UNROLL:  // of STOREs: the expander's group of statements, which pm_render flattens
        if (!u.dtype().is_void())
          fail(pc, "is a vector not yet expanded (the VM runs graphs after the expander)");
        return pc;
      case Ops::CONST:
        out.lanes.assign(u.dtype().count, ConstValue::of(u.with_dtype(u.dtype().scalar_type())));
        return pc;
      case Ops::SPECIAL:
        if (u.arg().as_tuple().at(0).as_string() != "core_id")
          fail(pc, "is a GPU launch id; the VM runs CPU kernels (one run per core id)");
        out.lanes = {ConstValue::integer(u.dtype(), core_id_)};
        return pc;
      case Ops::RANGE:
        loop_end_[pc] = number(pc, 0).at(0).i;
        if (loop_end_[pc] <= 0) return jump_[pc];
        out.lanes = {ConstValue::integer(u.dtype(), 0)};
        return pc;
      case Ops::ENDRANGE: {
        ConstValue& counter = values_[jump_[pc]].lanes.at(0);
        if (counter.i + 1 >= loop_end_[jump_[pc]]) return pc;
        counter = ConstValue::integer(counter.dtype, counter.i + 1);
        return jump_[pc];
      }
      case Ops::INDEX:
        index(pc, out);
        return pc;
      case Ops::LOAD:
        load(pc, out);
        return pc;
      case Ops::STORE:
        store(pc);
        return pc;
      case Ops::VECTORIZE:
        out.lanes.clear();
        for (size_t i = 0; i < u.src().size(); i++)
          for (const ConstValue& x : number(pc, i)) out.lanes.push_back(x);
        break;
      case Ops::GEP: {
        const std::vector<ConstValue>& x = number(pc, 0);
        out.lanes.clear();
        for (int64_t i : u.arg().as_ints()) {
          if (i < 0 || static_cast<size_t>(i) >= x.size())
            fail(pc, "picks lane " + std::to_string(i) + " of a value with " + std::to_string(x.size()));
          out.lanes.push_back(x[i]);
        }
        break;
      }
      case Ops::WMMA:
        wmma(pc, out);
        break;
      default:
        if (!GroupOp::ALU.contains(u.op()) && u.op() != Ops::CAST && u.op() != Ops::BITCAST)
          fail(pc, "is not an op the VM runs (it runs CPU kernels from remove_reduce on)");
        alu(pc, out);
    }
    if (out.lanes.size() != u.dtype().count)
      fail(pc, "computed " + std::to_string(out.lanes.size()) + " lanes for its dtype");
    return pc;
  }

  // ALU, CAST, BITCAST: lane by lane, a scalar operand broadcast to every lane.
  void alu(size_t pc, Value& out) {
    const UOp& u = uops_[pc];
    const size_t n = u.dtype().count;
    std::vector<const std::vector<ConstValue>*> operands;
    for (size_t i = 0; i < u.src().size(); i++) {
      operands.push_back(&number(pc, i));
      if (operands.back()->size() != n && operands.back()->size() != 1)
        fail(pc, "has a source of " + std::to_string(operands.back()->size()) + " lanes");
    }
    out.lanes.clear();
    std::vector<ConstValue> args(operands.size());
    for (size_t lane = 0; lane < n; lane++) {
      for (size_t i = 0; i < operands.size(); i++)
        args[i] = (*operands[i])[operands[i]->size() == 1 ? 0 : lane];
      out.lanes.push_back(exec_alu(u.op(), u.dtype().scalar_type(), args));
    }
  }

  void index(size_t pc, Value& out) {
    const Value& buf = in(pc, 0);
    if (buf.memory < 0) fail(pc, "indexes something that is not a buffer");
    const std::vector<ConstValue>& idx = number(pc, 1);
    const std::vector<ConstValue>* gate = uops_[pc].src().size() > 2 ? &number(pc, 2) : nullptr;
    const size_t n = std::max(idx.size(), gate ? gate->size() : 1);
    if ((idx.size() != n && idx.size() != 1) || (gate && gate->size() != n && gate->size() != 1))
      fail(pc, "has an index and a gate of different widths");
    out.memory = buf.memory;
    out.lanes.clear();
    out.gates.clear();
    for (size_t i = 0; i < n; i++) {
      out.lanes.push_back(idx[idx.size() == 1 ? 0 : i]);
      out.gates.push_back(!gate || (*gate)[gate->size() == 1 ? 0 : i].truthy());
    }
  }

  // Calls f(lane, element) for each lane of a `width`-lane access through the INDEX source 0,
  // whose gate is on: k addresses, each the start of a run of width / k lanes of the element type
  // (an address of a vector register holds `count` lanes).
  template <class F>
  void access(size_t pc, size_t width, F&& f) {
    const Value& ptr = in(pc, 0);
    const size_t k = ptr.lanes.size(), run = width / k;
    if (run * k != width)
      fail(pc, "accesses " + std::to_string(width) + " lanes through " + std::to_string(k) + " addresses");
    const Memory& m = memories_[ptr.memory];
    const int64_t stride = uops_[pc].src(0).dtype().count;
    for (size_t a = 0; a < k; a++) {
      if (!ptr.gates[a]) continue;
      for (size_t j = 0; j < run; j++) {
        const int64_t e = ptr.lanes[a].i * stride + static_cast<int64_t>(j);
        if (e < 0 || e >= m.data->numel())
          fail(pc, "accesses element " + std::to_string(e) + " of " + m.name + ", which has " +
                       std::to_string(m.data->numel()));
        f(a * run + j, e);
      }
    }
  }

  // The memory behind source 0, which must be an INDEX.
  const Memory& indexed(size_t pc) const {
    const Value& ptr = in(pc, 0);
    if (ptr.memory < 0 || ptr.gates.empty())
      fail(pc, "accesses memory through something that is not an INDEX");
    return memories_[ptr.memory];
  }

  void load(size_t pc, Value& out) {
    const UOp& u = uops_[pc];
    out.lanes.assign(u.dtype().count, zero(u.dtype().scalar_type()));
    const HostBuffer& data = *indexed(pc).data;
    access(pc, u.dtype().count, [&](size_t lane, int64_t e) { out.lanes[lane] = read(data, e); });
  }

  void store(size_t pc) {
    const Memory& m = indexed(pc);
    const std::vector<ConstValue>& value = number(pc, 1);
    if (value[0].dtype != m.data->dtype)
      fail(pc, "stores " + to_string(value[0].dtype) + " into " + m.name + ", a buffer of " +
                   to_string(m.data->dtype));
    access(pc, value.size(), [&](size_t lane, int64_t e) { write(*m.data, e, value[lane]); });
  }

  // The CPU register block (wmma.hpp's wmma_c_helper): A has M lanes, B N lanes, C M*N, row-major.
  // Before the devectorizer a WMMA may be several, their operands' lanes concatenated
  // (devectorize_wmma splits it).
  void wmma(size_t pc, Value& out) {
    const codegen_detail::WmmaArg w(uops_[pc]);
    if (w.threads != 1 || w.k != 1)
      fail(pc, "is a " + w.name + "; the VM runs only the CPU register block (K 1, one thread)");
    const std::vector<ConstValue>&a = number(pc, 0), &b = number(pc, 1), &c = number(pc, 2);
    const size_t m = w.m, n = w.n, copies = m * n > 0 ? c.size() / (m * n) : 0;
    if (copies == 0 || copies * m * n != c.size() || a.size() != copies * m || b.size() != copies * n)
      fail(pc, "has operands of the wrong widths for " + w.name);
    out.lanes = c;
    for (size_t t = 0; t < copies; t++)
      for (size_t i = 0; i < m; i++)
        for (size_t j = 0; j < n; j++) {
          ConstValue& acc = out.lanes[(t * m + i) * n + j];
          const ConstValue product[] = {a[t * m + i], b[t * n + j]};
          const ConstValue sum[] = {acc, exec_alu(Ops::MUL, w.dtype_out, product)};
          acc = exec_alu(Ops::ADD, w.dtype_out, sum);
        }
  }

  const std::vector<UOp>& uops_;
  std::vector<Value> values_;
  std::vector<std::vector<size_t>> src_pos_;  // per uop, the positions of its sources
  std::vector<size_t> jump_;                  // RANGE <-> its ENDRANGE
  std::vector<int64_t> loop_end_;             // per RANGE, its bound in the current run of the loop
  std::vector<Memory> memories_;
  std::deque<HostBuffer> registers_;  // a deque: memories_ point into it
  int64_t num_cores_ = 1, core_id_ = 0;
};

}  // namespace

void run_program(const std::vector<UOp>& uops, const std::vector<HostBuffer*>& bufs,
                 const std::vector<int32_t>& var_values) {
  ProgramVM(uops, bufs, var_values).run();
}

}  // namespace tunebed
