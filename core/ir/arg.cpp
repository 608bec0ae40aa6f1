// Arg: typed access, structural hash and equality, and the registry of ArgObject parsers.
#include <bit>
#include <cmath>
#include <limits>
#include <map>
#include <mutex>
#include <stdexcept>

#include "core/ir/hash.hpp"
#include "core/ir/uop.hpp"

namespace tunebed {

namespace {

const char* kind_name(const Arg::Value& v) {
  static constexpr const char* names[] = {"None",  "bool", "int",   "float",  "string", "Ops",
                                          "dtype", "UOp",  "tuple", "record", "object"};
  return names[v.index()];
}

// A float arg's identity: its bits, so -0.0 stays apart from 0.0, except that every NaN is the
// same NaN, so NaN constants intern whatever their sign or payload (the text form prints them all
// as `nan`, and a NaN made by 0.0/0.0 has the sign bit set on x86).
uint64_t float_bits(double d) {
  return std::bit_cast<uint64_t>(std::isnan(d) ? std::numeric_limits<double>::quiet_NaN() : d);
}

}  // namespace

void Arg::throw_wrong_kind(const char* want) const {
  throw std::invalid_argument(std::string("arg is ") + kind_name(v) + ", expected " + want);
}

bool Arg::as_bool() const {
  if (!is<bool>()) throw_wrong_kind("bool");
  return std::get<bool>(v);
}
int64_t Arg::as_int() const {
  if (!is<int64_t>()) throw_wrong_kind("int");
  return std::get<int64_t>(v);
}
double Arg::as_number() const {
  if (is<int64_t>()) return static_cast<double>(std::get<int64_t>(v));
  if (is<bool>()) return std::get<bool>(v) ? 1.0 : 0.0;
  if (!is<double>()) throw_wrong_kind("number");
  return std::get<double>(v);
}
const std::string& Arg::as_string() const {
  if (!is<std::string>()) throw_wrong_kind("string");
  return std::get<std::string>(v);
}
Ops Arg::as_op() const {
  if (!is<Ops>()) throw_wrong_kind("Ops");
  return std::get<Ops>(v);
}
const DType& Arg::as_dtype() const {
  if (!is<DType>()) throw_wrong_kind("dtype");
  return std::get<DType>(v);
}
const UOp& Arg::as_uop() const {
  if (!is<UOp>()) throw_wrong_kind("UOp");
  return std::get<UOp>(v);
}
const ArgTuple& Arg::as_tuple() const {
  if (!is_tuple()) throw_wrong_kind("tuple");
  return *std::get<std::shared_ptr<const ArgTuple>>(v);
}
const Record& Arg::as_record() const {
  if (!is_record()) throw_wrong_kind("record");
  return *std::get<std::shared_ptr<const Record>>(v);
}
std::vector<int64_t> Arg::as_ints() const {
  std::vector<int64_t> out;
  for (const Arg& a : as_tuple()) out.push_back(a.as_int());
  return out;
}

uint64_t Arg::hash() const {
  uint64_t h = v.index();
  return std::visit(
      [h](const auto& x) -> uint64_t {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, None>) return h;
        else if constexpr (std::is_same_v<T, bool>) return hash_mix(h, x);
        else if constexpr (std::is_same_v<T, int64_t>) return hash_mix(h, static_cast<uint64_t>(x));
        else if constexpr (std::is_same_v<T, double>) return hash_mix(h, float_bits(x));
        else if constexpr (std::is_same_v<T, std::string>) return hash_mix(h, hash_bytes(x));
        else if constexpr (std::is_same_v<T, Ops>) return hash_mix(h, static_cast<uint64_t>(x));
        else if constexpr (std::is_same_v<T, DType>) return hash_mix(h, hash_value(x));
        else if constexpr (std::is_same_v<T, UOp>) return hash_mix(h, x ? x.hash() : 0);
        else if constexpr (std::is_same_v<T, std::shared_ptr<const ArgTuple>>) {
          uint64_t r = hash_mix(h, x->size());
          for (const Arg& a : *x) r = hash_mix(r, a.hash());
          return r;
        } else if constexpr (std::is_same_v<T, std::shared_ptr<const Record>>) {
          uint64_t r = hash_mix(h, hash_bytes(x->name));
          for (const auto& [k, a] : x->fields) r = hash_mix(hash_mix(r, hash_bytes(k)), a.hash());
          return r;
        } else {
          return hash_mix(hash_mix(h, hash_bytes(x->kind())), x->hash());
        }
      },
      v);
}

bool Arg::operator==(const Arg& o) const {
  if (v.index() != o.v.index()) return false;
  return std::visit(
      [&o](const auto& x) -> bool {
        using T = std::decay_t<decltype(x)>;
        const T& y = std::get<T>(o.v);
        if constexpr (std::is_same_v<T, double>) return float_bits(x) == float_bits(y);
        else if constexpr (std::is_same_v<T, std::shared_ptr<const ArgTuple>> ||
                           std::is_same_v<T, std::shared_ptr<const Record>>)
          return x == y || *x == *y;
        else if constexpr (std::is_same_v<T, std::shared_ptr<const ArgObject>>)
          return x == y || (x->kind() == y->kind() && x->hash() == y->hash() && x->equals(*y));
        else return x == y;
      },
      v);
}

const Arg* Record::find(std::string_view field) const {
  for (const auto& [k, a] : fields)
    if (k == field) return &a;
  return nullptr;
}

const Arg& Record::at(std::string_view field) const {
  if (const Arg* a = find(field)) return *a;
  throw std::invalid_argument(name + " has no field '" + std::string(field) + "'");
}

namespace {
std::mutex& registry_mutex() {
  static std::mutex m;
  return m;
}
std::map<std::string, ArgObjectParser, std::less<>>& registry() {
  static std::map<std::string, ArgObjectParser, std::less<>> r;
  return r;
}
}  // namespace

void register_arg_object(const std::string& kind, ArgObjectParser parser) {
  std::lock_guard lock(registry_mutex());
  registry()[kind] = std::move(parser);
}

const ArgObjectParser* find_arg_object_parser(std::string_view kind) {
  std::lock_guard lock(registry_mutex());
  auto it = registry().find(kind);
  return it == registry().end() ? nullptr : &it->second;
}

}  // namespace tunebed
