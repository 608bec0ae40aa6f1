// Fuzzes the whole compiler on random tensor programs: the fuzzer's bytes choose a program
// (core/tensor/random_program.hpp: elementwise, reduce, movement, matmul, cast, where, arange),
// which is scheduled; every kernel gets a random legal opt sequence (core/opt/actions.hpp), is code
// generated, compiled by clang and run on the CPU, item by item as the schedule orders them. The
// output must equal what the Eigen reference interpreter computes from the tensor graph, within
// the dtype's tolerance (core/engine/check.hpp).
//
// Each compiled kernel's output buffers start poisoned (check.hpp), so a codegen that skips a store
// shows as "never written" even where the right value is 0 (the schedule's new buffers are zeros).
//
// When it does not, the AST interpreter runs the same schedule: if that one is right the fault is
// in opt or codegen ("compiled"), else in the scheduler ("scheduled"); the signature says which.
// A program the reference refuses (an integer division by zero) is skipped, not a finding.
//
// Throughput: a fresh kernel costs a clang run. Shapes stay small (dims <= 4, rank <= 3) and
// compiled kernels are kept per process (fuzz_support.hpp), so mutations that keep a kernel skip it.
#include <sstream>

#include "core/engine/check.hpp"
#include "core/opt/actions.hpp"
#include "core/reference/reference.hpp"
#include "core/schedule/ast_interpreter.hpp"
#include "core/schedule/schedule.hpp"
#include "fuzz/fuzz_support.hpp"

namespace {

using namespace tunebed;

struct KernelRun {
  std::string name;
  std::vector<Opt> opts;
};

HostBuffer& buffer_of(const UOp& buffer, BufferData& data) {
  std::shared_ptr<HostBuffer>& b = data[buffer.src(0).arg().as_int()];
  if (!b) b = std::make_shared<HostBuffer>(buffer.dtype(), buffer.arg().as_int());
  return *b;
}

// The DEFINE_GLOBAL a LOAD or STORE addresses (directly or through its VIEW), or -1.
int64_t global_of(const UOp& access) {
  for (const UOp& s : access.src()) {
    if (s.op() == Ops::DEFINE_GLOBAL) return s.arg().as_int();
    if (s.op() == Ops::VIEW && !s.src().empty() && s.src(0).op() == Ops::DEFINE_GLOBAL) return s.src(0).arg().as_int();
  }
  return -1;
}

// Which of AST's N buffers it stores and never loads: those start poisoned (check.hpp), so an
// element the compiled kernel never writes reaches the check as the poison, not as a zero that
// may happen to be right (a ReLU's, a pad's).
std::vector<bool> written_only(const UOp& ast, size_t n) {
  std::vector<bool> stored(n), loaded(n);
  for (const UOp& u : ast.toposort()) {
    if (u.op() != Ops::STORE && u.op() != Ops::LOAD) continue;
    const int64_t g = global_of(u);
    if (g >= 0 && static_cast<size_t>(g) < n) (u.op() == Ops::STORE ? stored : loaded)[static_cast<size_t>(g)] = true;
  }
  std::vector<bool> only(n);
  for (size_t i = 0; i < n; i++) only[i] = stored[i] && !loaded[i];
  return only;
}

// Runs the schedule with every kernel optimized by a random legal opt sequence and compiled.
void run_compiled(const Schedule& s, BufferData& data, uint64_t opt_seed, std::vector<KernelRun>& log) {
  static auto& cache =
      *new fuzz::ProgramCache;  // never destroyed: its UOps outlive the intern table at exit
  for (const ScheduleItem& item : s.items) {
    if (item.is_copy()) {
      buffer_of(item.bufs.at(0), data).bytes = buffer_of(item.bufs.at(1), data).bytes;
      continue;
    }
    Kernel k(item.ast, Renderer::cpu(2));
    const std::vector<Opt> opts = random_opts(k, opt_seed++, 4);
    k.apply_opts(opts);
    log.push_back({k.name(), opts});
    std::vector<HostBuffer> bufs;
    for (const UOp& b : item.bufs) bufs.push_back(buffer_of(b, data));
    const std::vector<bool> poison = written_only(item.ast, bufs.size());
    for (size_t i = 0; i < bufs.size(); i++)
      if (poison[i]) bufs[i] = poisoned(bufs[i].dtype, bufs[i].numel());
    bufs = cache.get(k.get_optimized_ast()).run_on_copies(bufs);
    for (size_t i = 0; i < bufs.size(); i++) buffer_of(item.bufs[i], data) = std::move(bufs[i]);
  }
}

std::string describe(const RandomProgram& p, const std::vector<KernelRun>& log) {
  std::ostringstream out;
  out << "program (" << p.inputs.size() << " inputs):\n" << print_uop(p.output.uop()) << "\nkernels:";
  for (const KernelRun& k : log) out << "\n  " << k.name << " opts [" << to_string(k.opts) << "]";
  return out.str();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  FuzzedDataProvider fdp(data, size);
  fuzz::FdpSource source(fdp);
  const RandomProgram program = random_program(
      source, {.max_depth = 4, .max_rank = 3, .max_dim = 4, .dtypes = {dtypes::float32, dtypes::int32}});
  const uint64_t opt_seed = fdp.ConsumeIntegral<uint64_t>();
  const Tensor& out = program.output;

  HostBuffer eigen;
  try {
    eigen = reference::to_host(reference::evaluate(out.uop(), out.buffers()));
  } catch (const reference::ReferenceError&) {
    return 0;  // not a program with a value (a division by zero)
  }
  std::vector<KernelRun> log;
  HostBuffer got;
  Schedule s;
  try {
    s = create_schedule({out.uop()});
    BufferData bufs = fuzz::deep_copy(out.buffers());
    run_compiled(s, bufs, opt_seed, log);
    got = read_output(s.outputs.at(0), bufs);
  } catch (const std::exception& e) {
    fuzz::report_finding("crash", std::string("fuzz_kernel threw: ") + e.what(), describe(program, log));
  }
  // Both against the schedule's exact run (values with derived error bounds): the Eigen reference
  // checks the scheduler, the compiled output checks the optimizer and codegen.
  const Expected want = expect_output(s, out.buffers());
  if (const Verdict v = check_output(eigen, want); !v.ok)
    fuzz::report_finding("wrong", "scheduled program differs from the reference",
                         v.message + "\n" + describe(program, log), v.max_error);
  if (const Verdict v = check_output(got, want); !v.ok)
    fuzz::report_finding("wrong", "compiled kernel differs from the exact run",
                         v.message + "\n" + describe(program, log), v.max_error);
  return 0;
}
