#include "harness/corpus_check.hpp"

#include <signal.h>

#include <algorithm>
#include <csignal>
#include <deque>
#include <map>
#include <optional>
#include <stdexcept>
#include <type_traits>

#include "core/codegen/codegen.hpp"
#include "core/engine/check.hpp"
#include "core/engine/compiled_kernel.hpp"
#include "core/ir/hash.hpp"
#include "core/ir/text.hpp"
#include "core/opt/actions.hpp"
#include "core/opt/heuristic.hpp"
#include "core/opt/kernel.hpp"
#include "core/runtime/device.hpp"
#include "core/schedule/ast_interpreter.hpp"
#include "search/supervisor.hpp"

namespace tunebed::cli {

using search::Message;
using search::WireReader;
using search::WireWriter;

std::string outcome_name(Outcome o) {
  static const char* const own[] = {"unsupported", "illegal", "unchecked", "import_error"};
  if (o < Outcome::unsupported) return std::string(to_string(static_cast<CandidateStatus>(o)));
  return own[static_cast<int>(o) - static_cast<int>(Outcome::unsupported)];
}

const char* opts_kind_name(OptsKind k) {
  static const char* const names[kOptsKinds] = {"none", "hand-coded", "tinygrad", "random"};
  return names[static_cast<int>(k)];
}

Outcome outcome_from_name(const std::string& name) {
  for (Outcome o : kOutcomes)
    if (name == outcome_name(o)) return o;
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
// The reference step, in `begin` frames: a crash there leaves every unsettled variant unchecked.
constexpr int kReference = -1;

// The frames between the parent and a checking child (fields in order).
enum class Say : uint8_t {
  check,    // parent -> child: a batch: kernel count, then each kernel's index and settled flags
  variant,  // child -> parent: kernel, variant, opts kind, opts
  begin,    // child -> parent: kernel, variant or kReference, weight: a step that may crash or hang
  done,     // child -> parent: kernel, variant, outcome, message
  checked,  // child -> parent: the batch is done
  failed,   // child -> parent: the batch threw this message
};

// A frame of KIND: each field an integer (or enum) as an i64, or a string.
void put(WireWriter& w, const std::string& s) { w.str(s); }
template <class T>
requires std::is_integral_v<T> || std::is_enum_v<T>
void put(WireWriter& w, T v) { w.i64(static_cast<int64_t>(v)); }
template <class... Fields>
Message frame(Say kind, const Fields&... fields) {
  WireWriter w(kind);
  (put(w, fields), ...);
  return w.bytes();
}

// The first line of a message, at most 400 characters: a clang log or a dump stays readable.
std::string one_line(const std::string& s) {
  std::string line = s.substr(0, s.find('\n'));
  return line.size() > 400 ? line.substr(0, 400) + "..." : line;
}

// --- a batch of kernels, in the checking child ---------------------------------------------------

// A frame to the parent, from the checking child.
void tell(int fd, const Message& m) {
  if (!search::write_frame(fd, m)) ::_exit(3);  // the parent is gone
}

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
  std::vector<Opt> opts;
  std::optional<Kernel> kernel;   // with the opts applied; reset once the variant is settled
  std::optional<size_t> same_as;  // renders to the same source as this earlier variant
  int64_t work = 0;               // loop_iterations of its program
  std::optional<CompiledKernel> compiled;
};

struct KernelCheck {
  size_t index = 0;  // in the corpus's kernel list
  const imports::CorpusKernel* corpus = nullptr;
  UOp ast;
  std::vector<Variant> vs;
  std::vector<bool> settled_before;  // by an earlier child for this kernel
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
    vs.push_back({.result = {kind, to_string(opts), Outcome::ok, ""}, .opts = opts, .kernel = std::move(k)});
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
  BatchChecker(const CheckOptions& o, int fd) : options_(o), fd_(fd) {}

  void run(std::vector<KernelCheck>& batch) {
    for (KernelCheck& kc : batch) prepare(kc);
    std::vector<Slot> all;
    for (KernelCheck& kc : batch)
      for (size_t i = 0; i < kc.vs.size(); i++)
        if (kc.open(i)) all.push_back({&kc, i});
    compiler_.emplace(open_device("cpu"), Renderer::cpu(kCores));
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
    tell(fd_, frame(Say::begin, kc.index, i, weight));
  }

  void settle(KernelCheck& kc, size_t i, Outcome o, const std::string& message) {
    Variant& v = kc.vs[i];
    v.result.outcome = o;
    v.result.message = one_line(message);
    const bool was_open = i >= kc.settled_before.size() || !kc.settled_before[i];
    v.kernel.reset();
    v.compiled.reset();
    if (!was_open) return;  // settled by an earlier child (a rerun reference): said already
    tell(fd_, frame(Say::done, kc.index, i, o, v.result.message));
  }

  // Variants, announced; illegal ones settled; each open one rendered once, to find the ones
  // that codegen refuses, the ones past the run limit and the ones that render alike.
  void prepare(KernelCheck& kc) {
    auto announce = [&] {
      for (size_t i = 0; i < kc.vs.size(); i++)
        tell(fd_, frame(Say::variant, kc.index, i, kc.vs[i].result.kind, kc.vs[i].result.opts));
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
    const bool first_child = kc.settled_before.empty();
    std::map<std::string, size_t> rendered;  // source -> the first variant that renders to it
    for (size_t i = 0; i < kc.vs.size(); i++) {
      Variant& v = kc.vs[i];
      if (v.result.outcome == Outcome::illegal && (first_child || !kc.settled_before[i]))
        settle(kc, i, Outcome::illegal, v.result.message);
      if (!kc.open(i)) continue;
      begin(kc, static_cast<int>(i));
      std::string source;
      try {
        const ProgramSpec spec = get_program(v.kernel->get_optimized_ast(), Renderer::cpu(kCores));
        source = spec.source;
        v.work = loop_iterations(spec);
      } catch (const CodegenError& e) {
        settle(kc, i, Outcome::unsupported, e.what());
        continue;
      } catch (const std::exception& e) {
        settle(kc, i, Outcome::compile_error, std::string("codegen threw: ") + e.what());
        continue;
      }
      // Random sequences often meet (and meet the hand-coded one): run each source once.
      if (auto [it, fresh] = rendered.emplace(std::move(source), i); !fresh) {
        v.same_as = it->second;
        v.kernel.reset();
      }
    }
  }

  // One translation unit for all SLOTS (compile_batch: clang runs once). A unit that fails is
  // split, by kernel and then by variant, to place the error.
  void compile(const std::vector<Slot>& slots) {
    // The step may take one timeout per 4 functions: clang's time goes with the variants (one
    // kernel's 22 unrolled variants took over a minute on a loaded machine), not the kernels.
    begin(*slots[0].kc, static_cast<int>(slots[0].i), (slots.size() + 3) / 4);
    std::vector<std::pair<UOp, KernelOpts>> unit;
    for (const Slot& s : slots) unit.emplace_back(s.kc->ast, KernelOpts::given(s.v().opts));
    try {
      std::vector<CompiledKernel> compiled = compiler_->compile_batch(unit);
      for (size_t j = 0; j < slots.size(); j++) slots[j].v().compiled = std::move(compiled[j]);
      return;
    } catch (const std::exception& e) {
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
          // Every variable at its minimum, the interpreter's default: a dataset kernel's buffers fit it.
          const std::vector<HostBuffer> out = kc.vs[i].compiled->run_on_copies(inputs);
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
  int fd_;
  std::optional<KernelCompiler> compiler_;
};

// The child's main: checks each batch it is sent, reporting every step.
void serve_batches(int fd, const std::vector<imports::CorpusKernel>& kernels, const CheckOptions& o) {
  while (std::optional<Message> request = search::read_frame(fd)) {
    WireReader r(std::move(*request));
    if (r.kind<Say>() != Say::check) throw std::runtime_error("a checking child was sent no batch");
    try {
      std::vector<KernelCheck> checks;
      for (int64_t n = r.i64("kernel count"); n > 0; n--) {
        const auto k = static_cast<size_t>(r.i64("kernel"));
        std::vector<bool> settled;
        for (int64_t m = r.i64("variant count"); m > 0; m--) settled.push_back(r.i64("settled"));
        checks.push_back({k, &kernels.at(k), parse_uop(kernels[k].text), {}, std::move(settled)});
      }
      BatchChecker(o, fd).run(checks);
      tell(fd, frame(Say::checked));
    } catch (const std::exception& e) {
      tell(fd, frame(Say::failed, std::string(e.what())));
    }
  }
}

// --- many kernels, in the parent -----------------------------------------------------------------

// What the parent knows of one kernel: the variants a child announced, and which are settled.
struct KernelState {
  std::vector<VariantResult> results;
  std::vector<bool> settled;
  bool unsettled() const {
    return results.empty() || std::find(settled.begin(), settled.end(), false) != settled.end();
  }
};

// What the parent knows of the batch one child is checking.
struct Batch {
  std::vector<size_t> kernels;                    // empty: the child is idle
  std::optional<std::pair<size_t, int>> current;  // the step begun: (kernel, variant or kReference)
  int64_t weight = 1;                             // the step may take this many timeouts
};

Message check_request(const Batch& b, const std::vector<KernelState>& states) {
  WireWriter w(Say::check);
  put(w, b.kernels.size());
  for (size_t k : b.kernels) {
    put(w, k);
    put(w, states[k].settled.size());
    for (bool s : states[k].settled) put(w, s);
  }
  return w.bytes();
}

// A `variant`, `begin` or `done` frame.
void hear(Say say, WireReader& r, Batch& b, std::vector<KernelState>& states) {
  const auto k = static_cast<size_t>(r.i64("kernel"));
  const auto i = static_cast<int>(r.i64("variant"));
  KernelState& s = states.at(k);
  if (say == Say::variant) {
    const auto kind = static_cast<OptsKind>(r.i64("opts kind"));
    std::string opts = r.str("opts");
    // A later child of the same kernel announces the same variants again: kept from the first.
    if (static_cast<size_t>(i) == s.results.size() && s.settled.size() == s.results.size() &&
        std::find(s.settled.begin(), s.settled.end(), true) == s.settled.end()) {
      s.results.push_back({kind, std::move(opts), Outcome::ok, ""});
      s.settled.push_back(false);
    }
  } else if (say == Say::begin) {
    b.current = {k, i};
    b.weight = r.i64("weight");
  } else if (say == Say::done) {
    VariantResult& v = s.results.at(static_cast<size_t>(i));
    v.outcome = static_cast<Outcome>(r.i64("outcome"));
    v.message = r.str("message");
    s.settled.at(static_cast<size_t>(i)) = true;
    b.current.reset();
  } else {
    throw std::runtime_error("a checking child sent an unexpected frame");
  }
}

// The child ended (HOW says how) in the middle of its step: the step takes the blame, the
// variant it was in, or every open variant of the kernel when it was in the interpreter or
// between steps.
void blame(const Batch& b, std::vector<KernelState>& states, Outcome outcome, const std::string& how) {
  size_t kernel = b.kernels.front();
  int variant = kReference;
  if (b.current) {
    std::tie(kernel, variant) = *b.current;
  } else {
    for (size_t k : b.kernels)
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

// SIGINT and SIGTERM, while it lives, stop the run instead of the process. Installed before the
// children are forked, so they inherit it (supervisor.hpp) and a SIGTERM sent to every process
// does not kill one mid-kernel, which would count as a crash.
volatile std::sig_atomic_t stop_requested = 0;
extern "C" void stop_checking(int) { stop_requested = 1; }

class StopOnSignal {
 public:
  StopOnSignal() {
    struct sigaction sa {};
    sa.sa_handler = stop_checking;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART;
    sigaction(SIGINT, &sa, &previous_int_);
    sigaction(SIGTERM, &sa, &previous_term_);
  }
  ~StopOnSignal() {
    sigaction(SIGINT, &previous_int_, nullptr);
    sigaction(SIGTERM, &previous_term_, nullptr);
  }
  bool requested() const { return stop_requested != 0; }

 private:
  struct sigaction previous_int_ {
  }, previous_term_{};
};

}  // namespace

std::vector<std::vector<VariantResult>> check_kernels(const std::vector<imports::CorpusKernel>& kernels,
                                                      const CheckOptions& o, const KernelDone& on_kernel) {
  std::vector<KernelState> states(kernels.size());
  std::deque<size_t> queue;  // kernels to (re)start, in order
  for (size_t i = 0; i < kernels.size(); i++) queue.push_back(i);
  const size_t batch_size = static_cast<size_t>(std::max(1, o.batch));
  const size_t batches = (kernels.size() + batch_size - 1) / batch_size;
  const StopOnSignal stop;
  search::Supervisor children(static_cast<int>(std::min<size_t>(std::max(1, o.jobs), batches)),
                              [&](int fd) { serve_batches(fd, kernels, o); });
  std::vector<Batch> running(static_cast<size_t>(children.size()));
  int finished = 0;

  // The batch is over; FAULT, when it ended in one, takes the blame for its step. Whatever it left
  // unsettled goes back to the front of the queue.
  auto finish = [&](int child, const std::optional<std::pair<Outcome, std::string>>& fault) {
    Batch& b = running[static_cast<size_t>(child)];
    if (fault) blame(b, states, fault->first, fault->second);
    std::vector<size_t> again;
    for (size_t k : b.kernels) {
      if (states[k].unsettled()) {
        again.push_back(k);
      } else {
        ++finished;
        if (on_kernel) on_kernel(k, states[k].results, finished);
      }
    }
    queue.insert(queue.begin(), again.begin(), again.end());
    b = Batch{};
    children.unwatch(child);
  };

  auto busy = [&] {
    return std::any_of(running.begin(), running.end(), [](const Batch& b) { return !b.kernels.empty(); });
  };
  while ((!queue.empty() || busy()) && !stop.requested()) {
    for (int c = 0; c < children.size(); c++) {
      Batch& b = running[static_cast<size_t>(c)];
      if (!b.kernels.empty() || queue.empty()) continue;
      while (!queue.empty() && b.kernels.size() < batch_size) {
        b.kernels.push_back(queue.front());
        queue.pop_front();
      }
      children.send(c, check_request(b, states));
      children.watch(c, o.timeout_s);
    }
    // At most a second: a stop signal that lands just before the wait is seen all the same.
    const std::optional<search::ChildEvent> e = children.wait(1.0);
    if (!e) continue;
    Batch& b = running[static_cast<size_t>(e->child)];
    if (e->kind == search::ChildEvent::Kind::ended) {
      finish(e->child, std::pair(Outcome::crash, e->how));
    } else if (e->kind == search::ChildEvent::Kind::timed_out) {
      const auto limit = static_cast<int>(o.timeout_s * static_cast<double>(b.weight));
      finish(e->child, std::pair(Outcome::timeout, "no progress for " + std::to_string(limit) + " s"));
    } else {
      WireReader r(e->message);
      const Say say = r.kind<Say>();
      if (say == Say::checked || say == Say::failed) {
        finish(e->child, say == Say::failed
                             ? std::optional(std::pair(Outcome::crash, one_line(r.str("error"))))
                             : std::nullopt);
        children.restart(e->child);  // a fresh child for every batch
      } else {
        hear(say, r, b, states);
        children.watch(e->child, o.timeout_s * static_cast<double>(b.weight));
      }
    }
  }
  std::vector<std::vector<VariantResult>> out;
  for (KernelState& s : states)
    out.push_back(s.unsettled() ? std::vector<VariantResult>{} : std::move(s.results));
  return out;
}

}  // namespace tunebed::cli
