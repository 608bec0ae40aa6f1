// clang as the CPU device's compiler, with an on-disk cache of the shared objects it builds.
// The cache is safe for concurrent processes: every object is written under a name unique to its
// writer and renamed into place, so a reader sees either no file or a complete one.
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <future>
#include <map>
#include <mutex>
#include <regex>
#include <thread>

#include "core/ir/hash.hpp"
#include "core/runtime/cpu_device.hpp"
#include "core/runtime/subprocess.hpp"

namespace tunebed {

namespace {

std::atomic<int64_t> invocations{0};

std::string env_or(const char* name, const std::string& fallback) {
  const char* value = std::getenv(name);
  return value && *value ? value : fallback;
}

// A name no other writer uses at the same time: this process, this thread, a counter.
std::filesystem::path unique_temp(const std::filesystem::path& final_path, const char* suffix) {
  static std::atomic<uint64_t> counter{0};
  const uint64_t thread = std::hash<std::thread::id>{}(std::this_thread::get_id());
  return final_path.string() + ".tmp." + std::to_string(getpid()) + "." + std::to_string(thread % 1000000) +
         "." + std::to_string(counter++) + suffix;
}

// 64 bits of FNV-1a, finished with splitmix: a collision needs ~2^32 cached objects.
std::string hex_hash(const std::string& text) {
  char out[17];
  std::snprintf(out, sizeof out, "%016llx",
                static_cast<unsigned long long>(hash_mix(hash_bytes(text), text.size())));
  return out;
}

}  // namespace

std::filesystem::path cache_dir() {
  if (const char* dir = std::getenv("TUNEBED_CACHE_DIR"); dir && *dir) return dir;
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg)
    return std::filesystem::path(xdg) / "tunebed";
  return std::filesystem::path(env_or("HOME", "/tmp")) / ".cache" / "tunebed";
}

int64_t clang_invocations() { return invocations.load(); }

namespace {

// What ClangCompiler learns by running EXECUTABLE: its version line, its version, its linker.
struct Probe {
  std::string version_line, version, linker;
};

Probe probe(const std::string& executable) {
  Probe p;
  // The linker clang's driver would run. Linking through the driver costs as much as compiling
  // (it adds the C runtime's start files, which a kernel does not need): `clang -c` then `ld
  // -shared` directly took 52 ms a kernel where `clang -shared` took 105. Asked beside the version:
  // most of each question is clang's start (0.1 s), which a tune waits for before its first kernel.
  std::future<ProcessResult> asked_linker =
      std::async(std::launch::async, [&executable] { return run_process({executable, "-print-prog-name=ld"}); });
  ProcessResult result;
  try {
    result = run_process({executable, "--version"});
  } catch (const DeviceError& e) {
    throw DeviceError(std::string("CPU device is not available: ") + e.what());
  }
  if (result.exit_code != 0)
    throw DeviceError("CPU device is not available: `" + executable + " --version` failed:\n" + result.output);
  p.version_line = result.output.substr(0, result.output.find('\n'));
  std::smatch match;
  if (!std::regex_search(p.version_line, match, std::regex(R"(clang version (\d+[.\d]*))")))
    throw DeviceError("CPU device is not available: " + executable + " does not say it is clang: '" +
                      p.version_line + "'");
  p.version = match[1];
  const ProcessResult ld = asked_linker.get();
  p.linker = ld.output.substr(0, ld.output.find('\n'));
  const auto runs = [&p] {
    try {
      return run_process({p.linker, "--version"}).exit_code == 0;
    } catch (const DeviceError&) {
      return false;
    }
  };
  if (ld.exit_code != 0 || p.linker.empty() || !runs())
    throw DeviceError("CPU device is not available: " + executable + "'s linker '" + p.linker + "' cannot be run");
  return p;
}

// The probe of EXECUTABLE, run once per process (0.1-0.4 s of three processes, and the tuner opens
// the CPU device for its fingerprint at every kernel); a failed one is not kept.
const Probe& probed(const std::string& executable) {
  static std::mutex mutex;
  static std::map<std::string, Probe> done;
  const std::lock_guard lock(mutex);
  auto it = done.find(executable);
  if (it == done.end()) it = done.emplace(executable, probe(executable)).first;
  return it->second;
}

}  // namespace

ClangCompiler::ClangCompiler()
    : executable_(env_or("TUNEBED_CLANG", "clang")),
      flags_{"-O2", "-march=native", "-fPIC", "-fno-math-errno", "-ffp-contract=on"} {
  const Probe& p = probed(executable_);
  version_line_ = p.version_line;
  version_ = p.version;
  linker_ = p.linker;
}

std::filesystem::path ClangCompiler::compile(const std::string& source, const std::string& entry) const {
  std::string key = version_line_ + '\n';
  for (const std::string& flag : flags_) key += flag + ' ';
  key += linker_ + " -shared -lm";
  key += '\n' + source;
  const std::filesystem::path dir = cache_dir() / "cpu";
  std::filesystem::path object = dir / (hex_hash(key) + ".so");
  if (std::filesystem::exists(object)) return object;

  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) throw DeviceError("cannot create the kernel cache " + dir.string() + ": " + ec.message());
  const std::filesystem::path source_file = unique_temp(object, ".c"), temp_object = unique_temp(object, ".o"),
                              temp_library = unique_temp(object, "");
  {
    std::ofstream out(source_file, std::ios::binary);
    out << source;
    if (!out.flush()) throw DeviceError("cannot write " + source_file.string());
  }
  std::vector<std::string> argv{executable_};
  argv.insert(argv.end(), flags_.begin(), flags_.end());
  // stdin, so clang's messages say <stdin>:LINE:COL rather than a temporary path.
  argv.insert(argv.end(), {"-c", "-x", "c", "-", "-o", temp_object.string()});
  ++invocations;
  ProcessResult result;
  const auto remove_temporaries = [&] {
    for (const auto& f : {source_file, temp_object, temp_library}) std::filesystem::remove(f, ec);
  };
  try {
    result = run_process(argv, source_file);
    if (result.exit_code == 0)
      result = run_process({linker_, "-shared", temp_object.string(), "-o", temp_library.string(), "-lm"});
  } catch (...) {
    remove_temporaries();
    throw;
  }
  if (result.exit_code != 0) {
    remove_temporaries();
    throw CompileError("clang", entry, result.output, source);
  }
  std::filesystem::rename(temp_library, object, ec);
  if (ec) {
    const std::string why = ec.message();
    remove_temporaries();
    throw DeviceError("cannot move the compiled kernel into " + object.string() + ": " + why);
  }
  remove_temporaries();
  return object;
}

}  // namespace tunebed
