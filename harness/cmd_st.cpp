// `tunebed st SHAPE OP... [--json]`: apply movement ops to a contiguous ShapeTracker and print the
// views it ends up with, and with --json the buffer position every index reads.
#include <charconv>
#include <iostream>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/shape/shapetracker.hpp"
#include "harness/cli.hpp"

namespace tunebed::cli {
namespace {

// The --json map lists every element; beyond this it is not something to print.
constexpr int64_t kMaxMapElements = int64_t{1} << 22;

int64_t parse_int(std::string_view s, const std::string& where) {
  int64_t v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size() || s.empty())
    throw UsageError(where + ": '" + std::string(s) + "' is not an integer");
  return v;
}

std::vector<std::string_view> split(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  if (s.empty()) return out;
  size_t b = 0;
  for (size_t e; (e = s.find(sep, b)) != std::string_view::npos; b = e + 1) out.push_back(s.substr(b, e - b));
  out.push_back(s.substr(b));
  return out;
}

// One op as written: `name(item,item,...)`; items are ints, or `a:b` pairs for pad and shrink.
ShapeTracker apply_op(const ShapeTracker& st, const std::string& text) {
  size_t open = text.find('(');
  if (open == std::string::npos || text.back() != ')')
    throw UsageError("'" + text + "' is not of the form name(args)");
  std::string name = text.substr(0, open);
  std::vector<std::string_view> items =
      split(std::string_view(text).substr(open + 1, text.size() - open - 2), ',');
  auto ints = [&] {
    std::vector<int64_t> v;
    v.reserve(items.size());
    for (std::string_view it : items) v.push_back(parse_int(it, text));
    return v;
  };
  auto pairs = [&] {
    Mask m;
    for (std::string_view it : items) {
      std::vector<std::string_view> ab = split(it, ':');
      if (ab.size() != 2) throw UsageError(text + ": '" + std::string(it) + "' is not of the form a:b");
      m.emplace_back(parse_int(ab[0], text), parse_int(ab[1], text));
    }
    return m;
  };
  auto sizes = [&] {
    std::vector<int64_t> v = ints();
    return SymShape(v.begin(), v.end());
  };
  if (name == "reshape") return st.reshape(sizes());
  if (name == "expand") return st.expand(sizes());
  if (name == "permute") return st.permute(ints());
  if (name == "pad") return st.pad(pairs());
  if (name == "shrink") return st.shrink(pairs());
  if (name == "flip") {
    std::vector<bool> axes(st.shape().size());
    for (int64_t a : ints()) {
      if (a < 0 || a >= static_cast<int64_t>(axes.size()))
        throw ViewError("flip: axis " + std::to_string(a) + " out of range for " +
                        std::to_string(axes.size()) + " dimensions");
      if (axes[a]) throw ViewError("flip: axis " + std::to_string(a) + " given twice");
      axes[a] = true;
    }
    return st.flip(axes);
  }
  throw UsageError("unknown op '" + name + "' (expected reshape, permute, expand, pad, shrink or flip)");
}

std::string json_ints(const SymShape& s) {
  std::string out = "[";
  for (size_t i = 0; i < s.size(); i++) out += (i ? "," : "") + to_string(s[i]);
  return out + "]";
}

std::string json_view(const View& v) {
  std::string mask = "null";
  if (v.mask()) {
    mask = "[";
    for (size_t i = 0; i < v.mask()->size(); i++)
      mask +=
          (i ? ",[" : "[") + to_string((*v.mask())[i].first) + "," + to_string((*v.mask())[i].second) + "]";
    mask += "]";
  }
  return "{\"shape\":" + json_ints(v.shape()) + ",\"strides\":" + json_ints(v.strides()) +
         ",\"offset\":" + to_string(v.offset()) + ",\"mask\":" + mask +
         ",\"contiguous\":" + (v.contiguous() ? "true" : "false") + "}";
}

int run(const std::vector<std::string>& args) {
  CommandLine cl{
      .synopsis = "tunebed st SHAPE OP... [--json]",
      .description =
          "Apply movement ops, left to right, to a contiguous ShapeTracker of SHAPE (sizes\n"
          "separated by commas, e.g. 4,6; empty for a scalar) and print the views it ends up\n"
          "with, one per line, the view nearest the buffer first. Ops:\n"
          "  reshape(2,12)     the new sizes\n"
          "  permute(1,0)      the new order of the axes\n"
          "  expand(4,6)       the new sizes; only size-1 axes may change\n"
          "  pad(1:1,0:2)      before:after padding per axis\n"
          "  shrink(0:3,1:2)   begin:end per axis\n"
          "  flip(0,1)         the axes to reverse\n"
          "--json prints {\"shape\", \"views\", \"map\"}: map lists, for every index of the final\n"
          "shape in row-major order, the base-buffer position it reads, or -1 where it is padding.",
  };
  cl.options.add_options()("shape", po::value<std::string>()->required(), "the base shape, e.g. 4,6")(
      "ops", po::value<std::vector<std::string>>()->composing(), "movement ops, applied in order")(
      "json", po::bool_switch(), "print shape, views and the index map as JSON");
  cl.positional.add("shape", 1).add("ops", -1);
  cl.examples = {"tunebed st 4,6 permute(1,0) reshape(24)", "tunebed st 4,6 pad(1:1,0:2) reshape(48) --json"};
  auto vm = parse(cl, args);
  if (!vm) return 0;

  SymShape base;
  for (std::string_view s : split((*vm)["shape"].as<std::string>(), ',')) {
    int64_t n = parse_int(s, "SHAPE");
    if (n < 0) throw UsageError("SHAPE: negative size " + std::to_string(n));
    base.push_back(n);
  }
  std::optional<ShapeTracker> maybe_st;
  try {
    maybe_st = ShapeTracker::from_shape(base);
  } catch (const std::exception& e) {  // sizes whose product overflows int64
    throw UsageError("SHAPE: " + std::string(e.what()));
  }
  ShapeTracker st = *maybe_st;
  std::vector<std::string> ops =
      vm->count("ops") ? (*vm)["ops"].as<std::vector<std::string>>() : std::vector<std::string>{};
  for (size_t i = 0; i < ops.size(); i++) {
    try {
      st = apply_op(st, ops[i]);
    } catch (const UsageError& e) {
      throw UsageError("op " + std::to_string(i + 1) + " " + e.what());
    } catch (const std::exception& e) {  // ViewError, or sizes that overflow int64
      throw UsageError("op " + std::to_string(i + 1) + " " + ops[i] + " on shape " + to_string(st.shape()) +
                       ": " + e.what());
    }
  }

  if (!(*vm)["json"].as<bool>()) {
    for (const View& v : st.views()) std::cout << v.repr() << "\n";
    return 0;
  }
  sint elements = 0;
  try {
    elements = prod(st.shape());
  } catch (const std::overflow_error&) {
    elements = kMaxMapElements + 1;
  }
  if (elements.to_int() > kMaxMapElements)
    throw UsageError("--json: the map of shape " + to_string(st.shape()) + " is too large to print (limit " +
                     std::to_string(kMaxMapElements) + " elements)");
  std::cout << "{\"shape\":" << json_ints(st.shape()) << ",\"views\":[";
  for (size_t i = 0; i < st.views().size(); i++) std::cout << (i ? "," : "") << json_view(st.views()[i]);
  std::cout << "],\"map\":[";
  std::vector<int64_t> map = st.buffer_positions();
  for (size_t i = 0; i < map.size(); i++) std::cout << (i ? "," : "") << map[i];
  std::cout << "]}\n";
  return 0;
}

const Registrar reg{"st", "apply movement ops to a ShapeTracker and print its views (and index map)", run};

}  // namespace
}  // namespace tunebed::cli
