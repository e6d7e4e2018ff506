// A kernel file's declaration read line by line, and the integer expressions
// its keys hold. Everything here is plain C++: a declaration is checked on a
// machine without CUDA, before anything is compiled.
#include "flashlab/kernels/student/declaration.hpp"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <optional>
#include <sstream>

#include "flashlab/sim/core/checked.hpp"
#include "flashlab/sim/core/closest_name.hpp"
#include "flashlab/sim/core/format.hpp"
#include "flashlab/sim/problem/pass.hpp"

namespace flashlab::kernels::student {

// ---- symbols ------------------------------------------------------------------------

const i64* Symbols::find(std::string_view name) const {
  for (const auto& [n, v] : values)
    if (n == name) return &v;
  return nullptr;
}

const std::vector<std::string>& compile_time_names() {
  static const std::vector<std::string> names{"Br", "Bc", "d", "dtype_bytes"};
  return names;
}

const std::vector<std::string>& run_time_names() {
  static const std::vector<std::string> names{"B", "H", "H_kv", "N_q", "N_kv", "T_r", "T_c",
                                              "Br", "Bc", "d", "dtype_bytes"};
  return names;
}

Symbols compile_time_symbols(sim::TileShape tiles, i64 head_dim, sim::DType dtype) {
  return {{{"Br", tiles.Br}, {"Bc", tiles.Bc}, {"d", head_dim}, {"dtype_bytes", sim::dtype_bytes(dtype)}}};
}

Symbols run_time_symbols(sim::TileShape tiles, const sim::AttentionProblem& p) {
  Symbols s = compile_time_symbols(tiles, p.head_dim, p.dtype);
  // A kernel without tiles (naive) has one "tile" per row and per key.
  const i64 br = tiles.Br > 0 ? tiles.Br : 1, bc = tiles.Bc > 0 ? tiles.Bc : 1;
  const std::pair<std::string, i64> problem[] = {{"B", p.batch},
                                                 {"H", p.heads},
                                                 {"H_kv", p.h_kv()},
                                                 {"N_q", p.n_q()},
                                                 {"N_kv", p.n_kv()},
                                                 {"T_r", sim::ceil_div(p.n_q(), br)},
                                                 {"T_c", sim::ceil_div(p.n_kv(), bc)}};
  s.values.insert(s.values.end(), std::begin(problem), std::end(problem));
  return s;
}

// ---- expressions ----------------------------------------------------------------------

struct Expression::Node {
  enum class Kind { number, name, unary_minus, binary, call } kind = Kind::number;
  i64 number = 0;
  std::string name;  // a name, or the function of a call
  char op = 0;       // + - * / %
  std::vector<std::shared_ptr<const Node>> args;
};

namespace {

using Node = Expression::Node;
using NodePtr = std::shared_ptr<const Node>;

const std::vector<std::string>& function_names() {
  static const std::vector<std::string> f{"cdiv", "min", "max"};
  return f;
}

class Parser {
 public:
  Parser(std::string_view text, const std::vector<std::string>& names) : s_(text), names_(names) {}

  NodePtr parse() {
    NodePtr n = sum();
    skip();
    if (i_ < s_.size()) fail("unexpected '" + std::string(1, s_[i_]) + "'");
    return n;
  }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    throw std::invalid_argument(what + " at column " + std::to_string(i_ + 1) + " of '" + std::string(s_) + "'");
  }
  void skip() {
    while (i_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[i_]))) ++i_;
  }
  bool eat(char c) {
    skip();
    if (i_ < s_.size() && s_[i_] == c) {
      ++i_;
      return true;
    }
    return false;
  }
  static NodePtr binary(char op, NodePtr a, NodePtr b) {
    auto n = std::make_shared<Node>();
    n->kind = Node::Kind::binary;
    n->op = op;
    n->args = {std::move(a), std::move(b)};
    return n;
  }
  NodePtr sum() {
    NodePtr n = product();
    for (;;) {
      if (eat('+')) n = binary('+', n, product());
      else if (eat('-')) n = binary('-', n, product());
      else return n;
    }
  }
  NodePtr product() {
    NodePtr n = factor();
    for (;;) {
      if (eat('*')) n = binary('*', n, factor());
      else if (eat('/')) n = binary('/', n, factor());
      else if (eat('%')) n = binary('%', n, factor());
      else return n;
    }
  }
  NodePtr factor() {
    skip();
    if (i_ >= s_.size()) fail("an expression ends too early");
    if (eat('(')) {
      NodePtr n = sum();
      if (!eat(')')) fail("missing ')'");
      return n;
    }
    if (eat('-')) {
      auto n = std::make_shared<Node>();
      n->kind = Node::Kind::unary_minus;
      n->args = {factor()};
      return n;
    }
    const char c = s_[i_];
    if (std::isdigit(static_cast<unsigned char>(c))) {
      i64 v = 0;
      while (i_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[i_]))) {
        const i64 digit = s_[i_] - '0';
        if (v > (std::numeric_limits<i64>::max() - digit) / 10) fail("a number beyond 64 bits");
        v = v * 10 + digit;
        ++i_;
      }
      auto n = std::make_shared<Node>();
      n->number = v;
      return n;
    }
    if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
      const std::size_t start = i_;
      while (i_ < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[i_])) || s_[i_] == '_')) ++i_;
      std::string word(s_.substr(start, i_ - start));
      const auto& fns = function_names();
      if (std::find(fns.begin(), fns.end(), word) != fns.end()) {
        if (!eat('(')) fail(word + " needs its arguments: " + word + "(a, b)");
        auto n = std::make_shared<Node>();
        n->kind = Node::Kind::call;
        n->name = word;
        n->args.push_back(sum());
        if (!eat(',')) fail(word + " takes two arguments");
        n->args.push_back(sum());
        if (!eat(')')) fail("missing ')' after the arguments of " + word);
        return n;
      }
      if (std::find(names_.begin(), names_.end(), word) == names_.end()) {
        std::string known;
        for (const std::string& k : names_) known += (known.empty() ? "" : ", ") + k;
        // N is the paper's one length; here queries and keys have their own.
        const std::string hint = word == "N" && std::find(names_.begin(), names_.end(), "N_q") != names_.end()
                                     ? " (did you mean N_q? N_kv for the keys)"
                                     : sim::did_you_mean(word, names_);
        throw std::invalid_argument("unknown name '" + word + "'" + hint +
                                    " (here an expression may use " + known + ", numbers, + - * / %, "
                                    "cdiv(a, b), min(a, b), max(a, b))");
      }
      auto n = std::make_shared<Node>();
      n->kind = Node::Kind::name;
      n->name = std::move(word);
      return n;
    }
    fail("unexpected '" + std::string(1, c) + "'");
  }

  std::string_view s_;
  const std::vector<std::string>& names_;
  std::size_t i_ = 0;
};

i64 evaluate_node(const Node& n, const Symbols& s) {
  auto overflow = [] { throw std::domain_error("a value beyond 64 bits"); };
  switch (n.kind) {
    case Node::Kind::number:
      return n.number;
    case Node::Kind::name: {
      const i64* v = s.find(n.name);
      if (v == nullptr) throw std::domain_error("'" + n.name + "' has no value here");
      return *v;
    }
    case Node::Kind::unary_minus: {
      const i64 a = evaluate_node(*n.args[0], s);
      if (a == std::numeric_limits<i64>::min()) overflow();
      return -a;
    }
    case Node::Kind::binary:
    case Node::Kind::call: {
      const i64 a = evaluate_node(*n.args[0], s), b = evaluate_node(*n.args[1], s);
      i64 r = 0;
      const char op = n.kind == Node::Kind::call ? (n.name == "cdiv" ? 'c' : n.name == "min" ? '<' : '>') : n.op;
      switch (op) {
        case '+':
          if (__builtin_add_overflow(a, b, &r)) overflow();
          return r;
        case '-':
          if (__builtin_sub_overflow(a, b, &r)) overflow();
          return r;
        case '*':
          if (__builtin_mul_overflow(a, b, &r)) overflow();
          return r;
        case '/':
        case '%':
        case 'c':
          if (b == 0) throw std::domain_error("a division by zero");
          if (a == std::numeric_limits<i64>::min() && b == -1) overflow();
          if (op == '/') return a / b;
          if (op == '%') return a % b;
          // ⌈a/b⌉ for the positive sizes it is meant for; floor division's mirror otherwise.
          return a / b + ((a % b != 0 && ((a > 0) == (b > 0))) ? 1 : 0);
        case '<':
          return std::min(a, b);
        case '>':
          return std::max(a, b);
        default:
          break;
      }
      break;
    }
  }
  throw std::logic_error("unknown expression node");
}

}  // namespace

Expression Expression::parse(std::string_view text, const std::vector<std::string>& names) {
  Expression e;
  e.text_ = std::string(text);
  e.root_ = Parser(text, names).parse();
  return e;
}

i64 Expression::evaluate(const Symbols& s) const {
  if (root_ == nullptr) throw std::logic_error("an empty expression was evaluated");
  return evaluate_node(*root_, s);
}

// ---- the declaration ---------------------------------------------------------------------

bool KernelDeclaration::supports(sim::DType t) const {
  return std::find(dtypes.begin(), dtypes.end(), t) != dtypes.end();
}

bool KernelDeclaration::supports_head_dim(i64 d) const {
  if (head_dims.empty()) return d >= 1;
  return std::find(head_dims.begin(), head_dims.end(), d) != head_dims.end();
}

std::string KernelFile::id() const { return std::string(kUserIdPrefix) + declaration.name; }

const std::vector<std::string>& declaration_keys() {
  static const std::vector<std::string> keys{"name",    "algorithm", "pass",      "tiles",  "threads",
                                             "smem",    "grid",      "launches",  "workspace",
                                             "dtypes",  "head_dims", "o_accumulator"};
  return keys;
}

namespace {

constexpr std::string_view kMarker = "flashlab kernel";

std::string trim(std::string_view s) {
  std::size_t a = 0, b = s.size();
  while (a < b && std::isspace(static_cast<unsigned char>(s[a]))) ++a;
  while (b > a && std::isspace(static_cast<unsigned char>(s[b - 1]))) --b;
  return std::string(s.substr(a, b - a));
}

// The text after "//" when the line is a line comment (leading blanks allowed).
std::optional<std::string> comment_text(std::string_view line) {
  const std::string t = trim(line);
  if (t.rfind("//", 0) != 0) return std::nullopt;
  return trim(std::string_view(t).substr(2));
}

std::vector<std::string> list_items(const std::string& value) {
  std::string v = value;
  std::replace(v.begin(), v.end(), ',', ' ');
  std::istringstream in(v);
  std::vector<std::string> out;
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

bool valid_name(const std::string& n) {
  if (n.empty() || n.size() > 40) return false;
  return std::all_of(n.begin(), n.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.';
  });
}

// "64 x 64", "64x64", "64×64", "64, 64".
std::optional<sim::TileShape> parse_tiles(std::string v) {
  for (const std::string sep : {"×", "x", "X", "*", ","}) {
    for (std::size_t p = v.find(sep); p != std::string::npos; p = v.find(sep, p + 1)) v.replace(p, sep.size(), " ");
  }
  std::istringstream in(v);
  long long br = 0, bc = 0;
  std::string rest;
  if (!(in >> br >> bc) || (in >> rest)) return std::nullopt;
  return sim::TileShape{br, bc};
}

}  // namespace

KernelDeclaration parse_declaration(std::string_view source, const std::string& label) {
  std::vector<std::string> lines;
  {
    std::string text(source);
    std::istringstream in(text);
    for (std::string l; std::getline(in, l);) {
      if (!l.empty() && l.back() == '\r') l.pop_back();
      lines.push_back(std::move(l));
    }
  }
  auto error = [&](int line, const std::string& what) {
    return DeclarationError(label + ":" + std::to_string(line) + ": " + what);
  };

  std::size_t start = lines.size();
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const auto c = comment_text(lines[i]);
    if (c && *c == kMarker) {
      start = i;
      break;
    }
  }
  if (start == lines.size())
    throw DeclarationError(label + ": no declaration: FlashLab reads a block of // comment lines that starts with "
                           "\"// flashlab kernel\" and says what the kernel is (algorithm, tiles, threads, grid, "
                           "dtypes, head_dims; see assets/kernels/fa2.cu)");

  // key → (value, line)
  std::map<std::string, std::pair<std::string, int>> values;
  const std::vector<std::string>& keys = declaration_keys();
  for (std::size_t i = start + 1; i < lines.size(); ++i) {
    const auto c = comment_text(lines[i]);
    if (!c || c->empty()) break;  // the block ends at the first line that is not "// key: value"
    const int line = static_cast<int>(i) + 1;
    const std::size_t colon = c->find(':');
    if (colon == std::string::npos) break;
    const std::string key = trim(std::string_view(*c).substr(0, colon));
    if (key.empty() || key.find(' ') != std::string::npos) break;
    if (std::find(keys.begin(), keys.end(), key) == keys.end()) {
      std::string known;
      for (const std::string& k : keys) known += (known.empty() ? "" : ", ") + k;
      throw error(line, "unknown key '" + key + "'" + sim::did_you_mean(key, keys) + " (the keys: " + known + ")");
    }
    if (values.count(key)) throw error(line, key + " is declared twice (first on line " +
                                                 std::to_string(values[key].second) + ")");
    const std::string value = trim(std::string_view(*c).substr(colon + 1));
    if (value.empty()) throw error(line, key + ": no value");
    values[key] = {value, line};
  }

  KernelDeclaration k;
  k.line = static_cast<int>(start) + 1;
  auto missing = [&](const std::string& key, const std::string& example) {
    return error(k.line, "the declaration has no " + key + " (e.g. \"//   " + key + ": " + example + "\")");
  };

  // name
  if (auto it = values.find("name"); it != values.end()) {
    if (!valid_name(it->second.first))
      throw error(it->second.second, "name: '" + it->second.first + "' must be 1 to 40 letters, digits, '_', '-' "
                                     "or '.'");
    k.name = it->second.first;
  }

  // pass: forward only
  if (auto it = values.find("pass"); it != values.end() && it->second.first != "fwd") {
    if (const auto pass = sim::parse_pass_selection(it->second.first); pass && *pass != sim::PassSelection::fwd)
      throw error(it->second.second, "pass: " + it->second.first + ": FlashLab runs forward kernels only (a backward "
                                     "kernel is not taken yet); declare pass: fwd");
    throw error(it->second.second, "pass: expected fwd (got '" + it->second.first + "')");
  }

  // algorithm
  {
    const auto it = values.find("algorithm");
    if (it == values.end()) throw missing("algorithm", "fa1");
    const std::string& a = it->second.first;
    const std::vector<std::string> algos{"naive", "fa1", "fa2"};
    if (a == "naive" || a == "standard") k.algorithm = sim::Algorithm::standard;
    else if (a == "fa1") k.algorithm = sim::Algorithm::fa1;
    else if (a == "fa2") k.algorithm = sim::Algorithm::fa2;
    else if (const auto known = sim::parse_algorithm(a); known && sim::algorithm_info(*known).pass == sim::Pass::bwd)
      throw error(it->second.second, "algorithm: " + a + " is a backward algorithm: FlashLab runs forward kernels "
                                     "only (naive, fa1, fa2)");
    else
      throw error(it->second.second, "algorithm: '" + a + "' is not one the simulator models for your kernel" +
                                         sim::did_you_mean(a, algos) + " (naive: S and P in HBM; fa1: Algorithm 1 "
                                         "of FlashAttention; fa2: FlashAttention-2's loop order)");
  }

  // tiles
  if (auto it = values.find("tiles"); it != values.end()) {
    const auto t = parse_tiles(it->second.first);
    if (!t) throw error(it->second.second, "tiles: expected B_r x B_c, two whole numbers (got '" +
                                               it->second.first + "')");
    if (t->Br < 1 || t->Bc < 1)
      throw error(it->second.second, "tiles: B_r = " + std::to_string(t->Br) + ", B_c = " + std::to_string(t->Bc) +
                                         " are impossible: a tile holds at least one row");
    if (t->Br > 65536 || t->Bc > 65536)
      throw error(it->second.second, "tiles: " + std::to_string(t->Br) + " x " + std::to_string(t->Bc) +
                                         " are impossible: no GPU holds a tile of more than 65,536 rows on chip");
    k.tiles = *t;
  } else if (k.algorithm != sim::Algorithm::standard) {
    throw missing("tiles", "64 x 64");
  }

  // dtypes
  {
    const auto it = values.find("dtypes");
    if (it == values.end()) throw missing("dtypes", "fp32, fp16, bf16");
    for (const std::string& w : list_items(it->second.first)) {
      const auto t = sim::parse_dtype(w);
      if (!t) throw error(it->second.second, "dtypes: unknown dtype '" + w + "' (fp32, fp16, bf16)");
      if (!k.supports(*t)) k.dtypes.push_back(*t);
    }
  }

  // head_dims
  {
    const auto it = values.find("head_dims");
    if (it == values.end()) throw missing("head_dims", "64, 128");
    const std::vector<std::string> items = list_items(it->second.first);
    if (!(items.size() == 1 && items[0] == "any")) {
      for (const std::string& w : items) {
        const std::optional<sim::i64> d = sim::parse_whole(w);
        if (!d || *d < 1 || *d > 1024)
          throw error(it->second.second, "head_dims: '" + w + "' is not a head dim from 1 to 1024 (or write any)");
        if (std::find(k.head_dims.begin(), k.head_dims.end(), *d) == k.head_dims.end())
          k.head_dims.push_back(static_cast<int>(*d));
      }
    }
  }

  // o_accumulator
  if (auto it = values.find("o_accumulator"); it != values.end()) {
    const auto t = sim::parse_dtype(it->second.first);
    if (!t) throw error(it->second.second, "o_accumulator: unknown dtype '" + it->second.first + "' (fp32, fp16, bf16)");
    if (k.algorithm != sim::Algorithm::fa1)
      throw error(it->second.second, "o_accumulator: only a fa1 kernel keeps O in global memory between its steps");
    k.o_accumulator = *t;
  }

  // expressions
  auto expression = [&](const std::string& key, const std::string& text, int line, bool run_time) {
    try {
      return Expression::parse(text, run_time ? run_time_names() : compile_time_names());
    } catch (const std::invalid_argument& e) {
      throw error(line, key + ": " + e.what() +
                            (run_time ? "" : "; the problem's sizes are not known when the kernel is compiled"));
    }
  };
  auto optional_expression = [&](const std::string& key, const std::string& fallback, bool run_time) {
    const auto it = values.find(key);
    return it == values.end() ? expression(key, fallback, k.line, run_time)
                              : expression(key, it->second.first, it->second.second, run_time);
  };
  {
    const auto it = values.find("threads");
    if (it == values.end()) throw missing("threads", "128");
    k.threads = expression("threads", it->second.first, it->second.second, false);
  }
  k.smem = optional_expression("smem", "0", false);
  k.launches = optional_expression("launches", "1", true);
  k.workspace = optional_expression("workspace", "0", true);
  {
    const auto it = values.find("grid");
    if (it == values.end()) throw missing("grid", "T_r, B * H");
    std::vector<std::string> parts;
    std::string part;
    int depth = 0;
    for (char ch : it->second.first) {
      if (ch == '(') ++depth;
      if (ch == ')') --depth;
      if (ch == ',' && depth == 0) {
        parts.push_back(part);
        part.clear();
      } else {
        part += ch;
      }
    }
    parts.push_back(part);
    if (parts.size() > 3)
      throw error(it->second.second, "grid: at most three sizes, x, y, z (got " + std::to_string(parts.size()) + ")");
    for (std::size_t a = 0; a < 3; ++a)
      k.grid[a] = a < parts.size() ? expression("grid", trim(parts[a]), it->second.second, true)
                                   : Expression::parse("1", run_time_names());
  }

  // What no GPU can run, for every version the kernel declares.
  const int threads_line = values["threads"].second;
  const int smem_line = values.count("smem") ? values["smem"].second : k.line;
  std::vector<i64> dims(k.head_dims.begin(), k.head_dims.end());
  if (dims.empty()) dims = {64};
  for (sim::DType t : k.dtypes)
    for (i64 d : dims) {
      const std::string version = " (for " + std::string(sim::to_string(t)) + ", d = " + std::to_string(d) + ")";
      BlockShape b;
      try {
        b = block_shape(k, d, t);
      } catch (const std::domain_error& e) {
        throw error(threads_line, std::string(e.what()) + version);
      }
      if (b.threads < 1 || b.threads > 1024)
        throw error(threads_line, "threads: " + k.threads.text() + " = " + sim::group_digits(b.threads) + version +
                                      " is impossible: a block has 1 to 1,024 threads");
      if (b.smem_bytes < 0 || b.smem_bytes > kLargestSmemPerBlock)
        throw error(smem_line, "smem: " + k.smem.text() + " = " + sim::group_digits(b.smem_bytes) + " B" + version +
                                   " is impossible: no NVIDIA GPU gives a block more than " +
                                   sim::group_digits(kLargestSmemPerBlock) + " B of shared memory (tiles " +
                                   std::to_string(k.tiles.Br) + " x " + std::to_string(k.tiles.Bc) + ")");
    }
  return k;
}

KernelFile load_kernel_file(const std::string& path) {
  namespace fs = std::filesystem;
  KernelFile f;
  f.path = path;
  f.label = fs::path(path).filename().string();
  std::error_code ec;
  if (fs::is_directory(path, ec)) throw DeclarationError(path + ": is a folder, not a kernel file (.cu)");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw DeclarationError(path + ": cannot read the kernel file (does it exist?)");
  std::ostringstream ss;
  ss << in.rdbuf();
  f.source = ss.str();
  if (f.source.find('\0') != std::string::npos) throw DeclarationError(path + ": not a text file");
  f.declaration = parse_declaration(f.source, f.label);
  if (f.declaration.name.empty()) {
    std::string stem = fs::path(path).stem().string();
    for (char& c : stem)
      if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.')) c = '_';
    if (stem.size() > 40) stem.resize(40);
    f.declaration.name = stem.empty() ? "kernel" : stem;
  }
  return f;
}

BlockShape block_shape(const KernelDeclaration& k, i64 head_dim, sim::DType dtype) {
  const Symbols s = compile_time_symbols(k.tiles, head_dim, dtype);
  BlockShape b;
  try {
    b.threads = k.threads.evaluate(s);
  } catch (const std::domain_error& e) {
    throw std::domain_error("threads: " + k.threads.text() + ": " + e.what());
  }
  try {
    b.smem_bytes = k.smem.evaluate(s);
  } catch (const std::domain_error& e) {
    throw std::domain_error("smem: " + k.smem.text() + ": " + e.what());
  }
  return b;
}

LaunchShape launch_shape(const KernelDeclaration& k, const sim::AttentionProblem& p) {
  LaunchShape l;
  l.block = block_shape(k, p.head_dim, p.dtype);
  const Symbols s = run_time_symbols(k.tiles, p);
  auto eval = [&](const char* key, const Expression& e) {
    try {
      return e.evaluate(s);
    } catch (const std::domain_error& x) {
      throw std::domain_error(std::string(key) + ": " + e.text() + ": " + x.what());
    }
  };
  for (std::size_t a = 0; a < 3; ++a) l.grid[a] = eval("grid", k.grid[a]);
  l.launches = eval("launches", k.launches);
  l.workspace_bytes = eval("workspace", k.workspace);
  return l;
}

sim::TileShape model_tiles(const KernelDeclaration& k) {
  return sim::algorithm_info(k.algorithm).materializes_scores ? sim::TileShape{0, 0} : k.tiles;
}

}  // namespace flashlab::kernels::student
