#include "core/imports/corpus.hpp"

#include <zlib.h>

#include <memory>
#include <unordered_set>

#include "core/ir/text.hpp"
#include "core/shape/shapetracker.hpp"

namespace tunebed::imports {
namespace {

std::string size_name(const sint& s) {
  if (s.is_int()) return std::to_string(s.to_int());
  const UOp& u = s.uop();
  if (u.op() == Ops::DEFINE_VAR && u.arg().is_tuple() && !u.arg().as_tuple().empty() &&
      u.arg().as_tuple()[0].is<std::string>())
    return u.arg().as_tuple()[0].as_string();
  return "?";
}

bool is_blank(const std::string& line) { return line.find_first_not_of(" \t\r") == std::string::npos; }

}  // namespace

std::vector<std::string> read_lines(const std::string& path) {
  std::unique_ptr<gzFile_s, int (*)(gzFile)> f(gzopen(path.c_str(), "rb"), gzclose);
  if (!f) throw CorpusError("cannot open '" + path + "'");
  std::vector<std::string> lines;
  std::string pending;
  char buf[1 << 16];
  for (int n; (n = gzread(f.get(), buf, sizeof buf)) != 0;) {
    if (n < 0) {
      int code = 0;
      throw CorpusError("cannot read '" + path + "': " + gzerror(f.get(), &code));
    }
    pending.append(buf, static_cast<size_t>(n));
    size_t begin = 0;
    for (size_t nl; (nl = pending.find('\n', begin)) != std::string::npos; begin = nl + 1)
      lines.emplace_back(pending, begin, nl - begin);
    pending.erase(0, begin);
  }
  if (!pending.empty()) lines.push_back(std::move(pending));
  return lines;
}

CorpusImport import_lines(const std::vector<std::string>& lines) {
  CorpusImport out;
  std::unordered_set<std::string> seen;  // hashes; only looked up, never iterated into output
  for (size_t i = 0; i < lines.size(); i++) {
    if (is_blank(lines[i])) continue;
    const int line = static_cast<int>(i) + 1;
    out.lines++;
    try {
      ImportedKernel k = parse_tinygrad_kernel(lines[i]);
      std::string hash = kernel_hash(k.ast);
      if (!seen.insert(hash).second) {
        out.duplicates++;
        continue;
      }
      out.kernels.push_back(
          {line, std::move(hash), print_uop(k.ast), std::move(k.tinygrad_opts), kernel_shape(k.ast)});
    } catch (const ParseError& e) {
      // The text is one line, so the error's own line is always 1: the file line replaces it.
      const std::string what = e.what();
      const size_t col = what.find("column ");
      out.failures.push_back({line, col == std::string::npos ? what : what.substr(col)});
    } catch (const std::exception& e) {
      out.failures.push_back({line, e.what()});
    }
  }
  return out;
}

std::string kernel_shape(const UOp& ast) {
  SymShape full;
  for (const UOp& u : ast.toposort()) {
    if (u.op() != Ops::VIEW) continue;
    const SymShape& s = u.arg().as_object<ShapeTracker>().shape();
    if (s.size() > full.size()) full.resize(s.size(), sint(1));
    for (size_t i = 0; i < s.size(); i++)
      if (!s[i].is_int() || (full[i].is_int() && s[i].to_int() > full[i].to_int())) full[i] = s[i];
  }
  std::string out;
  for (const sint& s : full) out += (out.empty() ? "" : "x") + size_name(s);
  if (out.empty()) out = "()";
  return out + " " + to_string(ast.src(0).src(1).dtype());
}

}  // namespace tunebed::imports
