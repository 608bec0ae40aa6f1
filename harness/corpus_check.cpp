#include "harness/corpus_check.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>

#include "core/codegen/codegen.hpp"
#include "core/engine/check.hpp"
#include "core/ir/hash.hpp"
#include "core/ir/text.hpp"
#include "core/opt/actions.hpp"
#include "core/opt/heuristic.hpp"
#include "core/opt/kernel.hpp"
#include "core/runtime/device.hpp"
#include "core/schedule/ast_interpreter.hpp"
#include "search/worker_pool.hpp"

namespace tunebed::cli {

const char* outcome_name(Outcome o) {
  static const char* const names[kOutcomes] = {"ok",      "wrong",     "compile_error",
                                               "crash",   "timeout",   "unsupported",
                                               "illegal", "unchecked", "import_error"};
  return names[static_cast<int>(o)];
}

const char* opts_kind_name(OptsKind k) {
  static const char* const names[kOptsKinds] = {"none", "hand-coded", "tinygrad", "random"};
  return names[static_cast<int>(k)];
}

Outcome outcome_from_name(const std::string& name) {
  for (int o = 0; o < kOutcomes; o++)
    if (name == outcome_name(static_cast<Outcome>(o))) return static_cast<Outcome>(o);
  throw std::invalid_argument("unknown outcome '" + name + "'");
}

OptsKind opts_kind_from_name(const std::string& name) {
  for (int k = 0; k < kOptsKinds; k++)
    if (name == opts_kind_name(static_cast<OptsKind>(k))) return static_cast<OptsKind>(k);
  throw std::invalid_argument("unknown opts kind '" + name + "'");
}

namespace {

// A fixed core count, so that the hand-coded THREAD split (and so every result) is the same on
// every machine; the CPU device runs any number of slices on its pool.
constexpr int kCores = 4;
// The reference step, in "begin" lines: a crash there leaves every unsettled variant unchecked.
constexpr int kReference = -1;

// --- the protocol: one line per step, tab-separated, message escaped ------------------------------

std::string escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '\n')
      out += "\\n";
    else if (c == '\t')
      out += "\\t";
    else if (c == '\\')
      out += "\\\\";
    else
      out += c;
  }
  return out;
}

std::string unescape(const std::string& s) {
  std::string out;
  for (size_t i = 0; i < s.size(); i++) {
    if (s[i] != '\\' || i + 1 == s.size()) {
      out += s[i];
      continue;
    }
    const char c = s[++i];
    out += c == 'n' ? '\n' : c == 't' ? '\t' : c;
  }
  return out;
}

std::vector<std::string> split_tabs(const std::string& line) {
  std::vector<std::string> f;
  size_t begin = 0;
  for (size_t tab; (tab = line.find('\t', begin)) != std::string::npos; begin = tab + 1)
    f.push_back(line.substr(begin, tab - begin));
  f.push_back(line.substr(begin));
  return f;
}

// The first line of a message, at most 400 characters: a clang log or a dump stays readable.
std::string one_line(const std::string& s) {
  std::string line = s.substr(0, s.find('\n'));
  return line.size() > 400 ? line.substr(0, 400) + "..." : line;
}

// --- a batch of kernels, in the checking process -------------------------------------------------

using Emit = std::function<void(const std::string&)>;

// a * b, or INT64_MAX past it (both >= 0).
int64_t saturating_mul(int64_t a, int64_t b) { return b > 0 && a > INT64_MAX / b ? INT64_MAX : a * b; }

// What a run of the program costs: every loop body's runs, summed (a symbolic size at its
// maximum, the THREAD axis's cores included). A reduce with a closed form (reduce_collapse) has
// no loop, so a kernel of 10^12 iterations as an AST can be a cheap program.
int64_t loop_iterations(const ProgramSpec& p) {
  std::vector<int64_t> nest{std::max<int64_t>(p.num_cores, 1)};
  int64_t total = 0;
  for (const UOp& u : p.uops) {
    if (u.op() == Ops::RANGE) {
      nest.push_back(saturating_mul(nest.back(), std::max<int64_t>(u.src(0).vmax(), 0)));
      total = std::min(INT64_MAX - nest.back(), total) + nest.back();
    } else if (u.op() == Ops::ENDRANGE && nest.size() > 1) {
      nest.pop_back();
    }
  }
  return std::max<int64_t>(total, 1);
}

struct Variant {
  VariantResult result;
  std::optional<Kernel> kernel;   // with the opts applied; reset once the variant is settled
  std::optional<size_t> same_as;  // renders to the same source as this earlier variant
  ProgramSpec spec;
  std::string entry;  // spec.name renamed apart from every other function of the unit
  std::unique_ptr<Program> program;
  int64_t work = 0;  // loop_iterations(spec)
};

struct KernelCheck {
  size_t index = 0;  // in the corpus's kernel list
  const imports::CorpusKernel* corpus = nullptr;
  UOp ast;
  std::vector<Variant> vs;
  std::vector<bool> settled_before;  // by an earlier process for this kernel
  bool open(size_t i) const { return (i >= settled_before.size() || !settled_before[i]) && vs[i].kernel; }
  bool any_open() const {
    for (size_t i = 0; i < vs.size(); i++)
      if (open(i)) return true;
    return false;
  }
};

uint64_t kernel_seed(const imports::CorpusKernel& k, uint64_t seed) {
  return hash_mix(std::stoull(k.hash, nullptr, 16), seed);
}

std::vector<Variant> make_variants(const UOp& ast, const imports::CorpusKernel& k, const CheckOptions& o) {
  const Kernel root(ast, Renderer::cpu(kCores));
  std::vector<Variant> vs;
  auto add = [&](OptsKind kind, const std::vector<Opt>& opts) {
    Kernel k = root;
    k.apply_opts(opts);
    Variant& v = vs.emplace_back();
    v.result = {kind, to_string(opts), Outcome::ok, ""};
    v.kernel = std::move(k);
  };
  add(OptsKind::none, {});
  add(OptsKind::hand_coded, hand_coded_optimizations(root));
  if (!k.tinygrad_opts.empty()) {
    // tinygrad captured these for its own (GPU) renderer: LOCAL, GROUP and TC often have no
    // meaning on tunebed's CPU target, which its legality rules say.
    try {
      add(OptsKind::tinygrad, parse_opts(k.tinygrad_opts));
    } catch (const std::exception& e) {
      vs.emplace_back().result = {OptsKind::tinygrad, k.tinygrad_opts, Outcome::illegal, one_line(e.what())};
    }
  }
  const uint64_t seed = kernel_seed(k, o.seed);
  for (int i = 0; i < o.random_opts; i++)
    add(OptsKind::random, random_opts(root, hash_mix(seed, static_cast<uint64_t>(i))));
  return vs;
}

std::vector<HostBuffer> seeded_inputs(const UOp& ast, uint64_t seed) {
  std::vector<HostBuffer> bufs;
  for (const auto& [dtype, n] : ast_buffer_specs(ast)) {
    bufs.emplace_back(dtype, n);
    // Outputs too: the interpreter and the kernel start from the same bytes, so an element the
    // kernel should have written and did not shows up as a mismatch.
    fill_random(bufs.back(), hash_mix(seed, bufs.size()));
  }
  return bufs;
}

// Every variable at its minimum, the AST interpreter's default: a dataset kernel's buffers fit it.
std::vector<HostBuffer> run_compiled(Device& device, const Variant& v,
                                     const std::vector<HostBuffer>& inputs) {
  std::vector<std::unique_ptr<Buffer>> bufs;
  std::vector<Buffer*> args;
  for (const HostBuffer& h : inputs) {
    bufs.push_back(device.allocate(h.dtype, h.numel()));
    bufs.back()->copyin(h);
    args.push_back(bufs.back().get());
  }
  std::vector<int32_t> values;
  for (const UOp& var : v.spec.vars)
    values.push_back(static_cast<int32_t>(var.arg().as_tuple().at(1).as_int()));
  v.program->run(args, values, v.spec.launch_dims(values));
  std::vector<HostBuffer> out;
  for (const auto& b : bufs) out.push_back(b->to_host());
  return out;
}

// Every buffer, inputs included: a kernel that scribbles on an input is wrong too.
std::string check_all(const std::vector<HostBuffer>& out, const std::vector<Expected>& want) {
  for (size_t i = 0; i < want.size(); i++) {
    const Verdict v = check_output(out[i], want[i]);
    if (!v.ok) return "buffer " + std::to_string(i) + ": " + v.message;
  }
  return "";
}

class BatchChecker {
 public:
  BatchChecker(const CheckOptions& o, Emit emit) : options_(o), emit_(std::move(emit)) {}

  void run(std::vector<KernelCheck>& batch) {
    for (KernelCheck& kc : batch) prepare(kc);
    std::vector<Slot> all;
    for (KernelCheck& kc : batch)
      for (size_t i = 0; i < kc.vs.size(); i++)
        if (kc.open(i)) all.push_back({&kc, i});
    device_ = open_device("cpu");
    if (!all.empty()) compile(all);
    for (KernelCheck& kc : batch) execute(kc);
  }

 private:
  struct Slot {
    KernelCheck* kc;
    size_t i;
    Variant& v() const { return kc->vs[i]; }
  };

  void begin(const KernelCheck& kc, int i, size_t weight = 1) {
    emit_("begin\t" + std::to_string(kc.index) + "\t" + std::to_string(i) + "\t" + std::to_string(weight));
  }

  void settle(KernelCheck& kc, size_t i, Outcome o, const std::string& message) {
    Variant& v = kc.vs[i];
    v.result.outcome = o;
    v.result.message = one_line(message);
    const bool was_open = i >= kc.settled_before.size() || !kc.settled_before[i];
    v.kernel.reset();
    v.program.reset();
    if (!was_open) return;  // settled by an earlier process (a rerun reference): said already
    emit_("done\t" + std::to_string(kc.index) + "\t" + std::to_string(i) + "\t" + outcome_name(o) + "\t" +
          escape(v.result.message));
  }

  // Variants, announced; illegal ones settled; each open one rendered and renamed.
  void prepare(KernelCheck& kc) {
    auto announce = [&] {
      for (size_t i = 0; i < kc.vs.size(); i++)
        emit_("variant\t" + std::to_string(kc.index) + "\t" + std::to_string(i) + "\t" +
              std::to_string(static_cast<int>(kc.vs[i].result.kind)) + "\t" + escape(kc.vs[i].result.opts));
    };
    try {
      kc.vs = make_variants(kc.ast, *kc.corpus, options_);
    } catch (const std::exception& e) {  // the optimizer cannot take the kernel at all
      kc.vs.clear();
      kc.vs.emplace_back().result = {OptsKind::none, "", Outcome::unsupported, ""};
      announce();
      settle(kc, 0, Outcome::unsupported, std::string("core/opt: ") + e.what());
      return;
    }
    announce();
    const bool first_process = kc.settled_before.empty();
    std::map<std::string, size_t> rendered;  // source -> the first variant that renders to it
    for (size_t i = 0; i < kc.vs.size(); i++) {
      Variant& v = kc.vs[i];
      if (v.result.outcome == Outcome::illegal && (first_process || !kc.settled_before[i]))
        settle(kc, i, Outcome::illegal, v.result.message);
      if (!kc.open(i)) continue;
      begin(kc, static_cast<int>(i));
      try {
        v.spec = get_program(v.kernel->get_optimized_ast(), Renderer::cpu(kCores));
        v.work = loop_iterations(v.spec);
      } catch (const CodegenError& e) {
        settle(kc, i, Outcome::unsupported, e.what());
        continue;
      } catch (const std::exception& e) {
        settle(kc, i, Outcome::compile_error, std::string("codegen threw: ") + e.what());
        continue;
      }
      // Random sequences often meet (and meet the hand-coded one): run each source once.
      if (auto [it, fresh] = rendered.emplace(v.spec.source, i); !fresh) {
        v.same_as = it->second;
        v.kernel.reset();
        continue;
      }
      const std::string head = "void " + v.spec.name + "(";
      const size_t at = v.spec.source.find(head);
      if (at == std::string::npos) {
        settle(kc, i, Outcome::compile_error, "the rendered source defines no function " + v.spec.name);
        continue;
      }
      v.entry = v.spec.name + "_k" + std::to_string(kc.index) + "_v" + std::to_string(i);
      v.spec.source.replace(at, head.size(), "void " + v.entry + "(");
    }
  }

  // One translation unit for all SLOTS: clang runs once, every other entry is a cache hit on the
  // same object. A unit that fails is split, by kernel and then by variant, to place the error.
  void compile(const std::vector<Slot>& slots) {
    std::string unit;
    for (const Slot& s : slots) unit += s.v().spec.source + "\n";
    // The step may take one timeout per 4 functions: clang's time goes with the variants (one
    // kernel's 22 unrolled variants took over a minute on a loaded machine), not the kernels.
    begin(*slots[0].kc, static_cast<int>(slots[0].i), (slots.size() + 3) / 4);
    try {
      for (const Slot& s : slots) s.v().program = device_->compile(unit, s.v().entry);
      return;
    } catch (const CompileError& e) {
      if (slots.size() == 1) return settle(*slots[0].kc, slots[0].i, Outcome::compile_error, e.what());
    }
    std::vector<std::vector<Slot>> parts;
    for (const Slot& s : slots) {
      const bool by_kernel = slots.front().kc != slots.back().kc;
      if (parts.empty() || !by_kernel || parts.back().back().kc != s.kc) parts.emplace_back();
      parts.back().push_back(s);
    }
    for (const auto& part : parts) compile(part);
  }

  // The interpreter's exact run on seeded inputs (sampled past its budget: it runs ~1 µs per
  // iteration), then every compiled variant against it.
  void execute(KernelCheck& kc) {
    for (size_t i = 0; i < kc.vs.size(); i++)
      if (kc.open(i) && kc.vs[i].work > options_.run_limit)
        settle(
            kc, i, Outcome::unchecked,
            "compiled, not run: " + std::to_string(kc.vs[i].work) + " loop iterations, past the run limit");
    if (kc.any_open()) {
      const std::vector<HostBuffer> inputs = seeded_inputs(kc.ast, kernel_seed(*kc.corpus, options_.seed));
      std::vector<Expected> want;
      std::string refused;  // why there is no reference, when there is none
      begin(kc, kReference);
      try {
        want = expect_kernel_ast(kc.ast, inputs, {}, options_.interpreter_limit);
      } catch (const std::exception& e) {
        refused = std::string("AST interpreter: ") + e.what();
      }
      // Without a reference a variant still runs: a crash or a hang is a finding all the same.
      for (size_t i = 0; i < kc.vs.size(); i++) {
        if (!kc.open(i)) continue;
        begin(kc, static_cast<int>(i));
        try {
          const std::vector<HostBuffer> out = run_compiled(*device_, kc.vs[i], inputs);
          const std::string diff = refused.empty() ? check_all(out, want) : "";
          if (!refused.empty())
            settle(kc, i, Outcome::unsupported, refused);
          else
            settle(kc, i, diff.empty() ? Outcome::ok : Outcome::wrong, diff);
        } catch (const std::exception& e) {
          settle(kc, i, Outcome::crash, std::string("run threw: ") + e.what());
        }
      }
    }
    for (size_t i = 0; i < kc.vs.size(); i++)
      if (const auto j = kc.vs[i].same_as) settle(kc, i, kc.vs[*j].result.outcome, kc.vs[*j].result.message);
  }

  const CheckOptions& options_;
  Emit emit_;
  std::shared_ptr<Device> device_;
};

}  // namespace

// --- many kernels, in forked processes -----------------------------------------------------------

namespace {

using Clock = std::chrono::steady_clock;

volatile std::sig_atomic_t interrupted = 0;
extern "C" void on_interrupt(int) { interrupted = 1; }

// What the parent knows of one kernel: the variants a process announced, and which are settled.
struct KernelState {
  std::vector<VariantResult> results;
  std::vector<bool> settled;
  bool unsettled() const {
    return results.empty() || std::find(settled.begin(), settled.end(), false) != settled.end();
  }
};

struct Child {
  pid_t pid = -1;
  int fd = -1;
  std::vector<size_t> kernels;
  std::string pending;                            // bytes after the last full line
  std::optional<std::pair<size_t, int>> current;  // the step begun: (kernel, variant or kReference)
  size_t weight = 1;                              // the step may take this many timeouts
  std::string error;                              // what the process said before it gave up
  Clock::time_point last_heard;
};

void write_all(int fd, const std::string& s) {
  for (size_t off = 0; off < s.size();) {
    const ssize_t n = write(fd, s.data() + off, s.size() - off);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) _exit(3);  // the parent is gone
    off += static_cast<size_t>(n);
  }
}

Child spawn(const std::vector<imports::CorpusKernel>& kernels, std::vector<size_t> batch,
            const std::vector<KernelState>& states, const CheckOptions& o) {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) throw std::runtime_error("check-corpus: cannot make a pipe");
  const pid_t pid = fork();
  if (pid < 0) throw std::runtime_error("check-corpus: cannot fork");
  if (pid == 0) {
    close(fds[0]);
    setpgid(0, 0);  // its own group, so a timeout kill reaches the clang it may be running
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    // A faulting kernel must end this process by its signal (sanitizer runtimes would exit(1)).
    for (int sig : {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGINT, SIGTERM}) std::signal(sig, SIG_DFL);
    const int fd = fds[1];
    try {
      std::vector<KernelCheck> checks;
      for (size_t k : batch)
        checks.push_back({k, &kernels[k], parse_uop(kernels[k].text), {}, states[k].settled});
      BatchChecker(o, [fd](const std::string& line) { write_all(fd, line + "\n"); }).run(checks);
    } catch (const std::exception& e) {
      write_all(fd, "error\t" + escape(e.what()) + "\n");
      _exit(4);
    }
    _exit(0);
  }
  close(fds[1]);
  setpgid(pid, pid);  // also here: whichever of parent and child runs first
  return {pid, fds[0], std::move(batch), "", std::nullopt, 1, "", Clock::now()};
}

void handle_line(const std::string& line, Child& c, std::vector<KernelState>& states) {
  const std::vector<std::string> f = split_tabs(line);
  if (f[0] == "variant" && f.size() == 5) {
    KernelState& s = states.at(std::stoul(f[1]));
    // A later process of the same kernel announces the same variants again: kept from the first.
    if (std::stoul(f[2]) == s.results.size() && s.settled.size() == s.results.size() &&
        std::find(s.settled.begin(), s.settled.end(), true) == s.settled.end()) {
      s.results.push_back({static_cast<OptsKind>(std::stoi(f[3])), unescape(f[4]), Outcome::ok, ""});
      s.settled.push_back(false);
    }
  } else if (f[0] == "begin" && f.size() == 4) {
    c.current = {std::stoul(f[1]), std::stoi(f[2])};
    c.weight = std::stoul(f[3]);
  } else if (f[0] == "done" && f.size() == 5) {
    KernelState& s = states.at(std::stoul(f[1]));
    const size_t i = std::stoul(f[2]);
    s.results.at(i).outcome = outcome_from_name(f[3]);
    s.results.at(i).message = unescape(f[4]);
    s.settled.at(i) = true;
    c.current.reset();
  } else if (f[0] == "error" && f.size() == 2) {
    c.error = one_line(unescape(f[1]));
  }
}

// The process ended (HOW says how) in the middle of its step: the step takes the blame, the
// variant it was in, or every open variant of the kernel when it was in the interpreter or
// between steps.
void blame(const Child& c, std::vector<KernelState>& states, Outcome outcome, const std::string& how) {
  size_t kernel = c.kernels.front();
  int variant = kReference;
  if (c.current) {
    std::tie(kernel, variant) = *c.current;
  } else {
    for (size_t k : c.kernels)
      if (states[k].unsettled()) {
        kernel = k;
        break;
      }
  }
  KernelState& s = states[kernel];
  if (s.results.empty()) {  // it died before naming the kernel's variants
    s.results.push_back({OptsKind::none, "", outcome, how});
    s.settled.push_back(true);
    return;
  }
  for (size_t i = 0; i < s.results.size(); i++) {
    if (s.settled[i] || (variant != kReference && static_cast<int>(i) != variant)) continue;
    s.results[i].outcome = outcome;
    s.results[i].message =
        variant == kReference ? how + " (in the AST interpreter or between variants)" : how;
    s.settled[i] = true;
  }
}

}  // namespace

std::vector<std::vector<VariantResult>> check_kernels(const std::vector<imports::CorpusKernel>& kernels,
                                                      const CheckOptions& o, const KernelDone& on_kernel) {
  std::vector<KernelState> states(kernels.size());
  std::deque<size_t> queue;  // kernels to (re)start, in order
  for (size_t i = 0; i < kernels.size(); i++) queue.push_back(i);
  std::vector<Child> running;
  int finished = 0;

  // Whatever the process left unsettled goes back to the front of the queue.
  auto finish = [&](Child& c, std::optional<std::pair<Outcome, std::string>> fault) {
    close(c.fd);
    if (fault) blame(c, states, fault->first, c.error.empty() ? fault->second : c.error);
    for (size_t j = c.kernels.size(); j-- > 0;) {
      if (states[c.kernels[j]].unsettled()) {
        queue.push_front(c.kernels[j]);
      } else {
        ++finished;
        if (on_kernel) on_kernel(c.kernels[j], states[c.kernels[j]].results, finished);
      }
    }
  };

  // Ctrl-C or SIGTERM ends the run early: the kernels checked so far are reported, the rest are not.
  auto previous_int = std::signal(SIGINT, on_interrupt), previous_term = std::signal(SIGTERM, on_interrupt);
  while ((!queue.empty() || !running.empty()) && !interrupted) {
    while (!queue.empty() && static_cast<int>(running.size()) < std::max(1, o.jobs)) {
      std::vector<size_t> batch;
      while (!queue.empty() && static_cast<int>(batch.size()) < std::max(1, o.batch)) {
        batch.push_back(queue.front());
        queue.pop_front();
      }
      running.push_back(spawn(kernels, std::move(batch), states, o));
    }
    std::vector<pollfd> fds;
    for (const Child& c : running) fds.push_back({c.fd, POLLIN, 0});
    poll(fds.data(), fds.size(), 200);
    for (size_t j = running.size(); j-- > 0;) {
      Child& c = running[j];
      bool ended = false;
      if (fds[j].revents != 0) {
        char buf[1 << 14];
        const ssize_t n = read(c.fd, buf, sizeof buf);
        if (n > 0) {
          c.last_heard = Clock::now();
          c.pending.append(buf, static_cast<size_t>(n));
          for (size_t nl; (nl = c.pending.find('\n')) != std::string::npos; c.pending.erase(0, nl + 1))
            handle_line(c.pending.substr(0, nl), c, states);
        } else if (n == 0 || errno != EINTR) {
          ended = true;
        }
      }
      const auto limit = std::chrono::duration<double>(o.timeout_s * static_cast<double>(c.weight));
      if (ended) {
        int status = 0;
        waitpid(c.pid, &status, 0);
        const bool clean = WIFEXITED(status) && WEXITSTATUS(status) == 0;
        finish(c, clean ? std::nullopt
                        : std::optional(std::pair(
                              Outcome::crash,
                              WIFSIGNALED(status)
                                  ? "killed by signal " + search::signal_description(WTERMSIG(status))
                                  : "exited with status " + std::to_string(WEXITSTATUS(status)))));
        running.erase(running.begin() + static_cast<std::ptrdiff_t>(j));
      } else if (Clock::now() - c.last_heard > limit) {
        kill(-c.pid, SIGKILL);
        waitpid(c.pid, nullptr, 0);
        finish(c, std::pair(Outcome::timeout,
                            "no progress for " + std::to_string(static_cast<int>(limit.count())) + " s"));
        running.erase(running.begin() + static_cast<std::ptrdiff_t>(j));
      }
    }
  }
  for (Child& c : running) {
    kill(-c.pid, SIGKILL);
    waitpid(c.pid, nullptr, 0);
    close(c.fd);
  }
  std::signal(SIGINT, previous_int);
  std::signal(SIGTERM, previous_term);
  std::vector<std::vector<VariantResult>> out;
  for (KernelState& s : states)
    out.push_back(s.unsettled() ? std::vector<VariantResult>{} : std::move(s.results));
  return out;
}

}  // namespace tunebed::cli
