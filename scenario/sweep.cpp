#include "scenario/sweep.hpp"

#include <charconv>
#include <cstdio>
#include <stdexcept>
#include <type_traits>
#include <utility>
#include <variant>

#include "sim/output.hpp"

#include "scenario/text_file.hpp"
#include "scenario/yaml_reader.hpp"

namespace rnicsim::scenario {
namespace {

std::vector<std::string> split_path(const std::string& path) {
  std::vector<std::string> parts;
  size_t start = 0;
  while (true) {
    const size_t dot = path.find('.', start);
    parts.push_back(path.substr(start, dot == std::string::npos ? std::string::npos : dot - start));
    if (dot == std::string::npos) break;
    start = dot + 1;
  }
  for (const auto& p : parts)
    if (p.empty()) throw std::invalid_argument("'" + path + "' has an empty part");
  return parts;
}

// The child of `node` named `key`: a map key, or in a list an index or the
// element whose `name` is `key`. Invalid node if there is none.
YAML::Node child(YAML::Node node, const std::string& key) {
  if (node.IsSequence()) {
    size_t i = 0;
    auto [p, ec] = std::from_chars(key.data(), key.data() + key.size(), i);
    if (ec == std::errc() && p == key.data() + key.size()) return i < node.size() ? node[i] : YAML::Node(YAML::NodeType::Undefined);
    for (YAML::Node e : node)
      if (e.IsMap() && e["name"] && e["name"].IsScalar() && e["name"].Scalar() == key) return e;
    return YAML::Node(YAML::NodeType::Undefined);
  }
  if (node.IsMap() && node[key]) return node[key];
  return YAML::Node(YAML::NodeType::Undefined);
}

// Sets `value` at `path` under `root`, adding the last map key if missing.
void set_path(YAML::Node root, const std::string& path, const YAML::Node& value) {
  const auto parts = split_path(path);
  YAML::Node node = root;
  for (size_t i = 0; i + 1 < parts.size(); ++i) {
    YAML::Node next = child(node, parts[i]);
    if (!next.IsDefined()) {
      if (!node.IsMap()) throw std::invalid_argument("'" + path + "': no '" + parts[i] + "' in the list");
      node[parts[i]] = YAML::Node(YAML::NodeType::Map);
      next.reset(node[parts[i]]);
    }
    node.reset(next);  // rebinds (operator= would overwrite the node's value)
  }
  const std::string& last = parts.back();
  if (node.IsSequence()) {
    YAML::Node target = child(node, last);
    if (!target.IsDefined()) throw std::invalid_argument("'" + path + "': no element '" + last + "' in the list");
    size_t i = 0;
    auto [p, ec] = std::from_chars(last.data(), last.data() + last.size(), i);
    if (ec == std::errc() && p == last.data() + last.size()) {
      node[i] = value;
      return;
    }
    throw std::invalid_argument("'" + path + "': a list element is replaced by its index");
  }
  if (!node.IsMap() && !node.IsNull()) throw std::invalid_argument("'" + path + "': '" + last + "' is not under a mapping");
  node[last] = value;
}

std::string scalar_text(const YAML::Node& n) {
  if (n.IsScalar()) return n.Scalar();
  YAML::Emitter e;
  e << YAML::Flow << n;
  return e.c_str();
}

}  // namespace

void apply_override(YAML::Node root, const std::string& assignment) {
  const size_t eq = assignment.find('=');
  if (eq == std::string::npos || eq == 0) throw std::invalid_argument("expected PATH=VALUE, got '" + assignment + "'");
  YAML::Node value;
  try {
    value = YAML::Load(assignment.substr(eq + 1));
  } catch (const YAML::Exception& e) {
    throw std::invalid_argument("the value of '" + assignment + "' is not YAML: " + e.msg);
  }
  set_path(root, assignment.substr(0, eq), value);
}

std::vector<SweepPoint> expand_sweep(const YAML::Node& root, const std::function<YAML::Node()>& fresh,
                                     const std::string& file_name) {
  const YAML::Node sweep = root["sweep"];
  if (!sweep) return {};
  const Reader r(file_name);
  if (!sweep.IsMap() || sweep.size() == 0)
    r.fail(sweep, "expected 'sweep' to map setting paths to lists of values, like links.0.loss: [0.001, 0.01]");
  struct Axis {
    std::string path;
    YAML::Node values;
  };
  std::vector<Axis> axes;
  size_t runs = 1;
  for (auto it = sweep.begin(); it != sweep.end(); ++it) {
    Axis a{it->first.Scalar(), it->second};
    if (!a.values.IsSequence() || a.values.size() == 0) r.fail(it->second, "expected a non-empty list of values for " + a.path);
    if (a.path == "sweep" || a.path.rfind("sweep.", 0) == 0) r.fail(it->first, "a sweep cannot sweep itself");
    runs *= a.values.size();
    if (runs > 10'000) r.fail(it->second, "the sweep has more than 10000 runs");
    axes.push_back(a);
  }
  std::vector<SweepPoint> points;
  std::vector<size_t> idx(axes.size(), 0);
  for (size_t run = 0; run < runs; ++run) {
    YAML::Node copy = fresh();
    copy.remove("sweep");
    SweepPoint p;
    for (size_t a = 0; a < axes.size(); ++a) {
      const YAML::Node v = axes[a].values[idx[a]];
      try {
        set_path(copy, axes[a].path, v);
      } catch (const std::invalid_argument& e) {
        r.fail(sweep[axes[a].path] ? axes[a].values : sweep, std::string("sweep: ") + e.what());
      }
      p.settings.emplace_back(axes[a].path, scalar_text(v));
    }
    p.scenario = parse_scenario(copy, file_name);
    points.push_back(std::move(p));
    for (size_t a = axes.size(); a-- > 0;) {  // the last axis fastest
      if (++idx[a] < axes[a].values.size()) break;
      idx[a] = 0;
    }
  }
  return points;
}

std::vector<SweepPoint> load_runs(const std::string& path, const std::vector<std::string>& overrides) {
  const std::string content = read_text_file(path, kMaxScenarioFileBytes);
  auto fresh = [&] {
    YAML::Node root = load_yaml(content, path);
    for (const std::string& o : overrides) {
      if (!root.IsMap()) break;  // the parser says what is wrong with the file
      try {
        apply_override(root, o);
      } catch (const std::invalid_argument& e) {
        throw OverrideError("--set " + o + ": " + e.what());
      }
    }
    return root;
  };
  YAML::Node root = fresh();
  if (root.IsMap() && root["sweep"]) return expand_sweep(root, fresh, path);
  std::vector<SweepPoint> one(1);
  one.front().scenario = parse_scenario(root, path);
  return one;
}

namespace {

// A column of the sweep's table and CSV: its value in each run, which the table
// prints with `decimals` (a double) and the CSV writes exactly.
using Cell = std::variant<double, uint64_t, std::string>;
struct Column {
  std::string title;
  Cell (*cell)(const Summary&, size_t workload);
  int decimals;
  size_t workload;  // for per-workload columns
};

std::string table_text(const Cell& c, int decimals) {
  if (const double* d = std::get_if<double>(&c)) {
    char b[64];
    std::snprintf(b, sizeof b, "%.*f", decimals, *d);
    return b;
  }
  if (const uint64_t* n = std::get_if<uint64_t>(&c)) return std::to_string(*n);
  return std::get<std::string>(c);
}

void write_cell(sim::CsvWriter& out, const Cell& c) {
  std::visit([&](const auto& v) {
    if constexpr (std::is_same_v<std::decay_t<decltype(v)>, std::string>) out.text(v);
    else out.number(v);
  }, c);
}

std::vector<Column> columns(const std::vector<Summary>& results) {
  std::vector<Column> c;
  if (results.empty()) return c;
  for (size_t w = 0; w < results.front().workloads.size(); ++w) {
    const std::string& n = results.front().workloads[w].name;
    c.push_back({n + " Gb/s", [](const Summary& s, size_t i) -> Cell { return s.workloads[i].gbps; }, 2, w});
    c.push_back({n + " p50 us",
                 [](const Summary& s, size_t i) -> Cell { return static_cast<double>(s.workloads[i].lat_p50_ps) / 1e6; },
                 3, w});
    c.push_back({n + " p99 us",
                 [](const Summary& s, size_t i) -> Cell { return static_cast<double>(s.workloads[i].lat_p99_ps) / 1e6; },
                 3, w});
  }
  c.push_back({"drops", [](const Summary& s, size_t) -> Cell { return s.drops; }, 0, 0});
  c.push_back({"retransmitted", [](const Summary& s, size_t) -> Cell { return s.retransmissions; }, 0, 0});
  c.push_back({"result", [](const Summary& s, size_t) -> Cell {
                 if (!s.completed) return "INCOMPLETE";
                 return s.expectations_met ? "ok" : "EXPECT FAILED";
               }, 0, 0});
  return c;
}

}  // namespace

void print_sweep_table(const std::vector<SweepPoint>& points, const std::vector<Summary>& results, std::ostream& out) {
  if (points.empty()) return;
  const auto cols = columns(results);
  std::vector<std::vector<std::string>> rows;
  std::vector<std::string> head;
  for (const auto& [path, v] : points.front().settings) head.push_back(path);
  for (const Column& c : cols) head.push_back(c.title);
  rows.push_back(head);
  for (size_t i = 0; i < points.size() && i < results.size(); ++i) {
    std::vector<std::string> row;
    for (const auto& [path, v] : points[i].settings) row.push_back(v);
    for (const Column& c : cols) row.push_back(table_text(c.cell(results[i], c.workload), c.decimals));
    rows.push_back(row);
  }
  std::vector<size_t> width(head.size(), 0);
  for (const auto& row : rows)
    for (size_t k = 0; k < row.size(); ++k) width[k] = std::max(width[k], row[k].size());
  for (size_t r = 0; r < rows.size(); ++r) {
    for (size_t k = 0; k < rows[r].size(); ++k) {
      out << (k == 0 ? "" : "  ") << rows[r][k];
      if (k + 1 < rows[r].size()) out << std::string(width[k] - rows[r][k].size(), ' ');
    }
    out << '\n';
    if (r == 0) {
      size_t total = 0;
      for (size_t w : width) total += w + 2;
      out << std::string(total - 2, '-') << '\n';
    }
  }
}

void write_sweep_csv(const std::vector<SweepPoint>& points, const std::vector<Summary>& results, sim::CsvWriter& out) {
  if (points.empty()) return;
  const auto cols = columns(results);
  for (const auto& [path, v] : points.front().settings) out.text(path);
  for (const Column& c : cols) out.text(c.title);
  out.end_row();
  for (size_t i = 0; i < points.size() && i < results.size(); ++i) {
    for (const auto& [path, v] : points[i].settings) out.text(v);
    for (const Column& c : cols) write_cell(out, c.cell(results[i], c.workload));
    out.end_row();
  }
}

}  // namespace rnicsim::scenario
