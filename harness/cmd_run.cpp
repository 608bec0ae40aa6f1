// `tunebed run`: a workload compiled and run kernel by kernel (schedule, optimize, render, compile,
// run: core/engine), or evaluated with the reference interpreter (--reference); or one kernel AST
// (--ast: a canonical .uop file, a tinygrad AST text line, or a kernel hash in the tuning DB) on
// seeded random or given inputs. With a tuning database (--db, or --ast HASH), each kernel runs
// its stored winner where there is one (search/tuned_opts.hpp) and is timed against the default
// opts. --check compares with the reference interpreter (workloads) or the AST interpreter
// (--ast); --save writes .npy files for NumPy.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "core/engine/check.hpp"
#include "core/engine/compiled_kernel.hpp"
#include "core/imports/tinygrad_ast.hpp"
#include "core/ir/npy.hpp"
#include "core/ir/text.hpp"
#include "core/reference/reference.hpp"
#include "core/schedule/ast_interpreter.hpp"
#include "core/schedule/schedule.hpp"
#include "core/tensor/graph.hpp"
#include "core/tensor/workloads.hpp"
#include "harness/cli.hpp"
#include "harness/db_cli.hpp"
#include "harness/workload_check.hpp"
#include "search/tuned_opts.hpp"

namespace tunebed::cli {
namespace {

namespace fs = std::filesystem;

std::string format_double(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.9g", v);
  return buf;
}

fs::path output_dir(const std::string& dir) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec || !fs::is_directory(dir)) throw UsageError("cannot create directory '" + dir + "' for --save");
  return dir;
}

void save(const fs::path& dir, const std::string& name, const std::vector<int64_t>& shape,
          const HostBuffer& data) {
  const std::string path = (dir / (name + ".npy")).string();
  write_npy(path, shape, data);
  std::cout << "saved     " << path << "\n";
}

void print_checksum(const HostBuffer& out) {
  double sum = 0, lo = INFINITY, hi = -INFINITY;
  for (int64_t k = 0; k < out.numel(); k++) {
    const double v = out.dtype.is_float() ? out.get_float(k) : static_cast<double>(out.get_int(k));
    sum += v, lo = std::min(lo, v), hi = std::max(hi, v);
  }
  std::cout << "checksum  sum=" << format_double(sum) << " min=" << format_double(lo)
            << " max=" << format_double(hi) << "\n";
}

// --opts: a list applied to every kernel, "none" for no opts; without it the optimizer's default
// opts (a tensor core where one fits, else the hand-coded heuristics).
KernelOpts opts_option(const po::variables_map& vm) {
  if (!vm.count("opts")) return KernelOpts::defaults();
  const std::string text = vm["opts"].as<std::string>();
  if (text == "none" || text.empty()) return KernelOpts::none();
  try {
    return KernelOpts::given(parse_opts(text));
  } catch (const std::invalid_argument& e) {
    throw UsageError(std::string("--opts: ") + e.what());
  }
}

// Which opts each kernel gets: --opts for all of them; else, with a tuning database, each one's
// stored winner (or the default opts, saying why); else the default opts.
class OptsChooser {
 public:
  OptsChooser(KernelOpts given, bool given_explicitly) : given_(std::move(given)), explicit_(given_explicitly) {}

  // Looks kernels up in DB_PATH, unless --opts said what to run.
  void use_db(const std::string& db_path, const KernelCompiler& compiler) {
    if (explicit_) return;
    try {
      tuned_.emplace(db_path, *compiler.device(), compiler.renderer());
    } catch (const results::DbError& e) {
      throw UsageError(std::string("--db: ") + e.what());
    }
  }

  // The opts for AST, and the tuned-or-default verdict when a database was consulted.
  std::pair<KernelOpts, std::optional<search::TunedChoice>> choose(const UOp& ast) {
    if (!tuned_) return {given_, std::nullopt};
    search::TunedChoice c = tuned_->choose(ast);
    return {c.opts, c};
  }

 private:
  KernelOpts given_;
  bool explicit_;
  std::optional<search::TunedOpts> tuned_;
};

// Compiles one kernel; illegal opts are bad input (exit 2) naming the kernel.
CompiledKernel compile(const KernelCompiler& compiler, const UOp& ast, const KernelOpts& opts, int index) {
  try {
    return compiler.compile(ast, opts);
  } catch (const KernelOptError& e) {
    throw UsageError("kernel " + std::to_string(index) + " (" + Kernel(ast, compiler.renderer()).name() +
                     "): " + e.what());
  }
}

std::string format_time(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, s < 1e-4 ? "%.2f us" : "%.3f ms", s < 1e-4 ? s * 1e6 : s * 1e3);
  return buf;
}

// Compiles AST with the chosen opts, times it on bufs, prints its line (and its source at
// --debug 4), then runs it once. A kernel looked up in a tuning database says `tuned` or
// `default`; a tuned one is timed against the default opts in the same process, so the figures
// compare.
void compile_and_run(const KernelCompiler& compiler, OptsChooser& chooser, const UOp& ast, int index,
                     const std::vector<HostBuffer*>& bufs, int debug) {
  const auto [opts, choice] = chooser.choose(ast);
  const CompiledKernel k = compile(compiler, ast, opts, index);
  if (debug >= 4) std::cout << k.spec.source << "\n";
  const Timing t = k.time(bufs);
  std::cout << "kernel " << index << "  " << report_line(k, t) << "\n";
  if (choice && !choice->tuned) std::cout << "          default: " << choice->why << "\n";
  if (choice && choice->tuned) {
    const CompiledKernel plain = compile(compiler, ast, KernelOpts::defaults(), index);
    const double default_s = plain.time(bufs).median;
    char speedup[32];
    std::snprintf(speedup, sizeof speedup, "%.2fx", t.median > 0 ? default_s / t.median : 0.0);
    std::cout << "          tuned: " << choice->why << "; default opts "
              << (plain.applied_opts.empty() ? "-" : to_string(plain.applied_opts)) << " "
              << format_time(default_s) << ", speedup " << speedup << "\n";
  }
  k.run(bufs);
}

int fail_check(const Verdict& v, const std::string& against) {
  std::cout << "check     FAILED against the " << against << ": " << v.message << "\n";
  std::cerr << "error: output differs from the " << against << ": max error " << format_double(v.max_error)
            << "\n";
  return 1;
}

// "max error E, R of its bound[, N unverified]": how close a passing output came to failing.
std::string margin(const Verdict& v) {
  std::string s =
      "max error " + format_double(v.max_error) + ", " + format_double(v.worst_ratio) + "x its bound";
  if (v.unverified) s += ", " + std::to_string(v.unverified) + " element(s) unverified";
  return s;
}

// ---- workloads ----

Workload load_workload(const std::string& spec, uint64_t seed) {
  try {
    return make_workload(spec, seed);
  } catch (const WorkloadError& e) {
    throw UsageError(e.what());
  }
}

int run_reference(const Workload& w, const std::optional<fs::path>& save_dir) {
  std::cout << "backend   reference\n";
  const auto start = std::chrono::steady_clock::now();
  const reference::Array out = reference::evaluate(w.output.uop(), w.output.buffers());
  const double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  std::cout << "output    " << shape_to_string(out.shape) << " " << to_string(out.dtype) << "\n";
  print_checksum(reference::to_host(out));
  std::cout << "time      " << format_double(ms) << " ms\n";
  if (save_dir) {
    for (const auto& [name, t] : w.inputs) save(*save_dir, name, t.shape(), Tensor(t).data());
    save(*save_dir, "output", out.shape, reference::to_host(out));
  }
  return 0;
}

int run_compiled(const Workload& w, const po::variables_map& vm, const std::optional<fs::path>& save_dir) {
  const KernelCompiler compiler(open_device(vm["device"].as<std::string>()));
  OptsChooser chooser(opts_option(vm), vm.count("opts") > 0);
  if (!vm["db"].defaulted()) chooser.use_db(vm["db"].as<std::string>(), compiler);
  const int debug = vm["debug"].as<int>();
  const Schedule schedule = create_schedule({w.output.uop()});
  std::cout << "device    " << compiler.device()->name() << "\n";
  if (debug >= 2)
    for (size_t i = 0; i < schedule.items.size(); i++) {
      const ScheduleItem& item = schedule.items[i];
      std::cout << "item " << i << "    "
                << (item.is_copy() ? std::string("COPY") : Kernel(item.ast, compiler.renderer()).name())
                << "  " << kernel_hash(item.ast) << "  " << item.bufs.size() << " buffers\n";
    }
  BufferData data;
  for (const auto& [id, buf] : w.output.buffers()) data[id] = std::make_shared<HostBuffer>(*buf);
  int index = 0;
  run_schedule(schedule, data, [&](const ScheduleItem& item, const std::vector<HostBuffer*>& bufs) {
    compile_and_run(compiler, chooser, item.ast, index, bufs, debug);
    index++;
  });
  const HostBuffer out = read_output(schedule.outputs.at(0), data);
  std::cout << "output    " << shape_to_string(w.output.shape()) << " " << to_string(out.dtype) << "\n";
  print_checksum(out);
  if (save_dir) {
    for (const auto& [name, t] : w.inputs) save(*save_dir, name, t.shape(), Tensor(t).data());
    save(*save_dir, "output", w.output.shape(), out);
  }
  if (vm["check"].as<bool>()) {
    // Both oracles: the schedule's exact run (AST interpreter, with error bounds), and the Eigen
    // reference against that (workload_check.hpp).
    std::optional<WorkloadCheck> checked;
    try {
      checked = check_workload(w, schedule);
    } catch (const AstInterpreterError& e) {
      std::cout << "check     not run: " << e.what() << "\n";
      std::cerr << "error: --check: " << e.what() << "\n";
      return 1;
    }
    const WorkloadCheck& c = *checked;
    if (!c.eigen.ok) return fail_check(c.eigen, "Eigen reference");
    const Verdict v = check_output(out, c.expected);
    if (!v.ok) return fail_check(v, "exact run of the AST interpreter");
    std::cout << "check     ok against the AST interpreter's exact run (" << margin(v)
              << ") and the Eigen reference (" << margin(c.eigen) << ")\n";
  }
  return 0;
}

// ---- one kernel AST ----

struct LoadedAst {
  UOp ast;
  std::string origin;         // "file F" or "kernel HASH of DB"
  std::string tinygrad_opts;  // from a tinygrad AST's KernelInfo; "" when none
  bool from_tinygrad = false;
  bool from_db = false;
};

std::string read_text(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  if (!in) throw UsageError("--ast: cannot read '" + path.string() + "'");
  return s.str();
}

LoadedAst load_ast(const std::string& what, const std::string& db_path) {
  if (fs::is_regular_file(what)) {
    try {
      imports::ImportedKernel k = imports::parse_kernel_text(read_text(what));
      return {k.ast, "file " + what, k.tinygrad_opts, k.from_tinygrad};
    } catch (const std::exception& e) {
      std::string msg = e.what();
      std::replace(msg.begin(), msg.end(), '\n', ' ');
      throw UsageError("--ast " + what + ": " + msg);
    }
  }
  if (what.empty() || what.find_first_not_of("0123456789abcdefABCDEF") != std::string::npos)
    throw UsageError("--ast: '" + what + "' is neither a file nor a kernel hash");
  results::TuningDb db = open_for_reading(db_path);
  try {
    const results::Kernel k = db.kernel(db.resolve_kernel(what));
    return {parse_uop(k.ast), "kernel " + k.hash + " of " + db_path, "", false, true};
  } catch (const results::DbError& e) {
    throw UsageError(std::string("--ast: ") + e.what());
  }
}

// The DEFINE_GLOBAL args the AST stores to.
std::vector<int64_t> stored_buffers(const UOp& ast) {
  std::vector<int64_t> out;
  for (const UOp& u : ast.toposort())
    if (u.op() == Ops::STORE)
      for (const UOp& g : u.src(0).toposort())
        if (g.op() == Ops::DEFINE_GLOBAL) out.push_back(g.arg().as_int());
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

std::vector<HostBuffer> ast_inputs(const UOp& ast, const po::variables_map& vm) {
  const std::vector<int64_t> outputs = stored_buffers(ast);
  const uint64_t seed = vm["seed"].as<uint64_t>();
  std::vector<HostBuffer> bufs;
  for (const auto& [dtype, size] : ast_buffer_specs(ast)) {
    const int64_t i = static_cast<int64_t>(bufs.size());
    bufs.emplace_back(dtype, size);
    if (std::binary_search(outputs.begin(), outputs.end(), i)) continue;
    if (!vm.count("inputs")) {
      fill_random(bufs.back(), seed + static_cast<uint64_t>(i));
      continue;
    }
    const fs::path path = fs::path(vm["inputs"].as<std::string>()) / ("buf" + std::to_string(i) + ".npy");
    if (!fs::exists(path))
      throw UsageError("--inputs: " + path.string() + " is missing (the kernel reads buf" +
                       std::to_string(i) + ")");
    NpyArray a = [&] {
      try {
        return read_npy(path.string());
      } catch (const NpyError& e) {
        throw UsageError(std::string("--inputs: ") + e.what());
      }
    }();
    if (a.data.dtype != dtype || a.data.numel() != size)
      throw UsageError("--inputs: " + path.string() + " holds " + std::to_string(a.data.numel()) + " " +
                       to_string(a.data.dtype) + ", the kernel's buf" + std::to_string(i) + " is " +
                       std::to_string(size) + " " + to_string(dtype));
    bufs.back() = std::move(a.data);
  }
  return bufs;
}

KernelOpts ast_opts(const LoadedAst& loaded, const po::variables_map& vm) {
  if (!vm["tinygrad-opts"].as<bool>()) return opts_option(vm);
  if (vm.count("opts")) throw UsageError("--tinygrad-opts and --opts exclude each other");
  if (!loaded.from_tinygrad)
    throw UsageError("--tinygrad-opts: only a tinygrad AST text carries tinygrad's opts, not the " +
                     loaded.origin);
  if (loaded.tinygrad_opts.empty()) return KernelOpts::none();  // tinygrad ran it with no opts
  try {
    return KernelOpts::given(parse_opts(loaded.tinygrad_opts));
  } catch (const std::invalid_argument& e) {
    throw UsageError("tinygrad's opts \"" + loaded.tinygrad_opts + "\" are not tunebed opts: " + e.what());
  }
}

int run_ast(const po::variables_map& vm, const std::optional<fs::path>& save_dir) {
  const LoadedAst loaded = load_ast(vm["ast"].as<std::string>(), vm["db"].as<std::string>());
  const KernelCompiler compiler(open_device(vm["device"].as<std::string>()));
  try {
    Kernel(loaded.ast, compiler.renderer());
  } catch (const std::invalid_argument& e) {
    throw UsageError("--ast: the " + loaded.origin + " is not a kernel: " + e.what());
  }
  const bool opts_given = vm.count("opts") > 0 || vm["tinygrad-opts"].as<bool>();
  OptsChooser chooser(ast_opts(loaded, vm), opts_given);
  // A kernel named by its hash came from a tuning database: its winner there is what it runs.
  if (!vm["db"].defaulted() || loaded.from_db) chooser.use_db(vm["db"].as<std::string>(), compiler);
  std::cout << "kernel    " << kernel_hash(loaded.ast) << " (" << loaded.origin << ")\ndevice    "
            << compiler.device()->name() << "\n";
  if (vm["tinygrad-opts"].as<bool>())
    std::cout << "opts      tinygrad's: " << (loaded.tinygrad_opts.empty() ? "none" : loaded.tinygrad_opts)
              << "\n";
  std::vector<HostBuffer> bufs = ast_inputs(loaded.ast, vm);
  const std::vector<HostBuffer> inputs = bufs;
  std::vector<HostBuffer*> ptrs;
  for (HostBuffer& b : bufs) ptrs.push_back(&b);
  try {
    compile_and_run(compiler, chooser, loaded.ast, 0, ptrs, vm["debug"].as<int>());
  } catch (const UsageError& e) {
    if (!vm["tinygrad-opts"].as<bool>()) throw;
    throw UsageError("tinygrad's opts \"" + loaded.tinygrad_opts + "\" are not legal in tunebed: " + e.what());
  }
  for (size_t i = 0; i < bufs.size(); i++) {
    std::cout << "buf" << i << "      " << bufs[i].numel() << " " << to_string(bufs[i].dtype);
    if (i == 0) std::cout << " (output)";
    std::cout << "\n";
  }
  print_checksum(bufs.at(0));
  if (save_dir)
    for (size_t i = 0; i < bufs.size(); i++)
      save(*save_dir, "buf" + std::to_string(i), {bufs[i].numel()}, bufs[i]);
  if (vm["check"].as<bool>()) {
    const std::vector<Expected> want = expect_kernel_ast(loaded.ast, inputs);
    Verdict worst;
    for (int64_t i : stored_buffers(loaded.ast)) {
      Verdict v = check_output(bufs[static_cast<size_t>(i)], want[static_cast<size_t>(i)]);
      if (!v.ok) {
        v.message = "buf" + std::to_string(i) + ": " + v.message;
        return fail_check(v, "AST interpreter's exact run");
      }
      worst.max_error = std::max(worst.max_error, v.max_error);
      worst.worst_ratio = std::max(worst.worst_ratio, v.worst_ratio);
      worst.unverified += v.unverified;
    }
    std::cout << "check     ok against the AST interpreter's exact run (" << margin(worst) << ")\n";
  }
  return 0;
}

int run(const std::vector<std::string>& args) {
  CommandLine cl{
      .synopsis =
          "tunebed run WORKLOAD [--device cpu] [--opts OPTS | --db F] [--check] [--debug N] [--seed N]\n"
          "                     [--save DIR]\n"
          "       tunebed run WORKLOAD --reference [--seed N] [--save DIR]\n"
          "       tunebed run --ast FILE|HASH [--db F] [--opts OPTS | --tinygrad-opts] [--check]\n"
          "                   [--inputs DIR] [--save DIR] [--seed N] [--debug N]",
      .description =
          "Run the workload WORKLOAD (a spec such as matmul:M=512,N=512,K=512,dtype=float32; see\n"
          "`tunebed workloads`) on seeded random inputs: it is scheduled into kernels, and each kernel is\n"
          "optimized (unless --opts: a tensor core where one fits, else tinygrad's hand-coded opts),\n"
          "rendered, compiled and run. Each kernel prints its name, its shape coloured by axis type,\n"
          "its opts, its median time, GFLOP/s and GB/s. --opts applies the same list to every kernel\n"
          "(meant for single-kernel workloads: with several kernels, an opt illegal for one of them is\n"
          "an error naming the kernel); `--opts none`\n"
          "runs every kernel with no opts.\n"
          "\n"
          "--db F runs each kernel with its tuned opts: the winner `tunebed tune` stored in F for this kernel,\n"
          "this device and this tunebed's action space. Each kernel then says `tuned` (and is timed against\n"
          "the default opts, in the same process) or `default` and why: not tuned on this device, tuned under\n"
          "another action space (stale), or stored opts that are not legal here. --opts overrides it.\n"
          "\n"
          "--check compares the output with the reference interpreter and\n"
          "fails (exit 1) with the max error. --reference evaluates with the reference interpreter only.\n"
          "\n"
          "With --ast, run one kernel AST instead: FILE is a canonical AST text (as `tunebed import --out`\n"
          "writes) or a tinygrad AST text line; HASH (or a prefix) names a kernel of the tuning database.\n"
          "Its inputs are seeded random data (or DIR/buf<i>.npy with --inputs, i = the DEFINE_GLOBAL\n"
          "index); --check compares with the AST interpreter; --save writes every buffer after the run as\n"
          "DIR/buf<i>.npy (buf0 is the output). --tinygrad-opts applies the opts tinygrad recorded in a\n"
          "tinygrad AST's KernelInfo, and says so when they are not legal in tunebed. A kernel given by HASH,\n"
          "or with --db, runs its tuned opts as above.\n"
          "\n"
          "OPTS is a comma-separated list such as UPCAST:0:4,UNROLL:0:4 (see core/opt/opt.hpp).\n"
          "--debug 2 lists the schedule's items; --debug 4 also prints each kernel's source.",
  };
  cl.options.add_options()("workload", po::value<std::string>(), "the workload spec")(
      "ast", po::value<std::string>(),
      "run one kernel AST: a .uop file, a tinygrad AST text file, or a kernel hash")(
      "db", po::value<std::string>()->default_value(kDefaultDb),
      "tuning database: run each kernel's stored winner (and look --ast HASH up in it)")(
      "device", po::value<std::string>()->default_value("cpu"), "the device to run on")(
      "opts", po::value<std::string>(),
      "opts for every kernel (\"none\": no opts; default: TC where it fits, else hand-coded)")(
      "tinygrad-opts", po::bool_switch(), "with --ast: apply the opts tinygrad recorded for the kernel")(
      "check", po::bool_switch(), "compare with the reference (workloads) or AST interpreter (--ast)")(
      "debug", po::value<int>()->default_value(0), "2: list the kernels; 4: print their source")(
      "reference", po::bool_switch(), "evaluate the workload with the reference interpreter only")(
      "seed", po::value<uint64_t>()->default_value(0), "seed of the random inputs")(
      "inputs", po::value<std::string>(), "with --ast: read input buffer i from DIR/buf<i>.npy")(
      "save", po::value<std::string>(),
      "write the inputs and output (--ast: every buffer) as .npy files into DIR");
  cl.positional.add("workload", 1);
  cl.examples = {"tunebed run matmul:M=512,N=512,K=512 --check",
                 "tunebed run matmul:M=64,N=64,K=64 --opts UPCAST:0:4,UNROLL:0:4 --debug 4",
                 "tunebed run matmul:M=256,N=256,K=256 --db results/tuning.db --check",
                 "tunebed run conv2d:dtype=float16 --reference --seed 3 --save /tmp/conv",
                 "tunebed run --ast kernels/3f2a9c01d4e5b6a7.uop --check --save /tmp/k",
                 "tunebed run --ast 3f2a9c --db results/tuning.db --opts none"};
  auto vm = parse(cl, args);
  if (!vm) return 0;
  const bool has_ast = vm->count("ast") > 0, has_workload = vm->count("workload") > 0;
  if (has_ast == has_workload) throw UsageError("give either a WORKLOAD or --ast FILE|HASH");
  if (has_ast && (*vm)["reference"].as<bool>())
    throw UsageError("--reference runs workloads, not --ast kernels");
  if (!has_ast && ((*vm)["tinygrad-opts"].as<bool>() || vm->count("inputs")))
    throw UsageError("--tinygrad-opts and --inputs go with --ast");
  std::optional<fs::path> save_dir;
  if (vm->count("save")) save_dir = output_dir((*vm)["save"].as<std::string>());
  if (has_ast) return run_ast(*vm, save_dir);

  const Workload w = load_workload((*vm)["workload"].as<std::string>(), (*vm)["seed"].as<uint64_t>());
  std::cout << "workload  " << w.spec << "\n";
  for (const auto& [name, t] : w.inputs)
    std::cout << "input     " << name << " " << shape_to_string(t.shape()) << " " << to_string(t.dtype())
              << "\n";
  if ((*vm)["reference"].as<bool>()) return run_reference(w, save_dir);
  return run_compiled(w, *vm, save_dir);
}

const Registrar reg{
    "run", "run a workload or one kernel AST, compiled (or with --reference: the reference interpreter)",
    run};

}  // namespace
}  // namespace tunebed::cli
