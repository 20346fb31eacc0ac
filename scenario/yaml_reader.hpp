// Reads YAML nodes into checked values; every error names file:line:column and what
// was expected. Shared by the scenario loader, the NIC keys and presets, and the
// workload keys.
#pragma once

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "scenario/error.hpp"
#include "scenario/keys.hpp"

namespace rnicsim::scenario {

class Reader {
public:
  explicit Reader(std::string file) : file_(std::move(file)) {}
  const std::string& file() const { return file_; }

  [[noreturn]] void fail(const YAML::Node& n, const std::string& msg) const {
    const YAML::Mark m = n.Mark();
    fail(m, msg);
  }
  [[noreturn]] void fail(const YAML::Mark& m, const std::string& msg) const {
    // A node made by an override (--set, sweep) has no place in the file.
    if (m.line < 0) throw ScenarioError(file_, 0, 0, msg + " (in a value set from outside the file)");
    throw ScenarioError(file_, m.line + 1, m.column + 1, msg);
  }

  // Checks that `n` is a map whose keys are all in `allowed`.
  template <class List>
  void expect_map_of(const YAML::Node& n, const std::string& what, const List& allowed) const {
    if (!n.IsMap()) fail(n, "expected " + what + " (a mapping of keys to values)");
    for (auto it = n.begin(); it != n.end(); ++it) {
      const std::string key = it->first.Scalar();
      if (std::find(std::begin(allowed), std::end(allowed), key) == std::end(allowed)) {
        std::string list;
        for (const auto& a : allowed) list += (list.empty() ? "" : ", ") + std::string(a);
        fail(it->first, "unknown key '" + key + "' in " + what + " (expected one of: " + list + ")");
      }
    }
  }
  // Checks that `n` is a map whose keys are all declared in `keys` or `more`.
  void expect_keys(const YAML::Node& n, const std::string& what, KeyTable keys, KeyTable more = {}) const {
    std::vector<std::string_view> allowed;
    for (KeyTable t : {keys, more})
      for (const KeyInfo& k : t) allowed.push_back(k.name);
    expect_map_of(n, what, allowed);
  }
  std::string scalar(const YAML::Node& n, const std::string& what) const {
    if (!n.IsScalar()) fail(n, "expected " + what + " (a single value)");
    return n.Scalar();
  }
  template <class T>
  T parsed(const YAML::Node& n, const std::string& what, std::optional<T> (*parse)(std::string_view)) const {
    const std::string s = scalar(n, what);
    auto v = parse(s);
    if (!v) fail(n, "expected " + what + ", got '" + s + "'");
    return *v;
  }
  uint64_t integer(const YAML::Node& n, const std::string& what, uint64_t lo, uint64_t hi) const {
    const std::string s = scalar(n, what);
    uint64_t v = 0;
    auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc() || p != s.data() + s.size()) fail(n, "expected " + what + " (a whole number), got '" + s + "'");
    if (v < lo || v > hi)
      fail(n, what + " must be between " + std::to_string(lo) + " and " + std::to_string(hi) + ", got " + s);
    return v;
  }
  bool boolean(const YAML::Node& n, const std::string& what) const {
    const std::string s = scalar(n, what);
    if (s == "true" || s == "on" || s == "yes") return true;
    if (s == "false" || s == "off" || s == "no") return false;
    fail(n, "expected " + what + " (true or false), got '" + s + "'");
  }
  double probability(const YAML::Node& n, const std::string& what) const {
    const std::string s = scalar(n, what);
    char* end = nullptr;
    const double v = std::strtod(s.c_str(), &end);
    if (s.empty() || end != s.c_str() + s.size() || !(v >= 0.0 && v <= 1.0))
      fail(n, "expected " + what + " (a probability from 0 to 1), got '" + s + "'");
    return v;
  }
  // A real number in [lo, hi].
  double real(const YAML::Node& n, const std::string& what, double lo, double hi) const {
    const std::string s = scalar(n, what);
    char* end = nullptr;
    const double v = std::strtod(s.c_str(), &end);
    if (s.empty() || end != s.c_str() + s.size() || !(v >= lo && v <= hi))
      fail(n, "expected " + what + " (a number from " + trimmed(lo) + " to " + trimmed(hi) + "), got '" + s + "'");
    return v;
  }
  // One of `options`, (name, value) pairs (an array or a std::array of them).
  template <class Options>
  auto choice(const YAML::Node& n, const std::string& what, const Options& options) const {
    const std::string s = scalar(n, what);
    std::string list;
    for (const auto& [name, value] : options) {
      if (s == name) return value;
      list += (list.empty() ? "" : ", ") + std::string(name);
    }
    fail(n, "expected " + what + " (one of: " + list + "), got '" + s + "'");
  }

private:
  static std::string trimmed(double v) {
    std::string t = std::to_string(v);
    while (t.find('.') != std::string::npos && (t.back() == '0' || t.back() == '.')) t.pop_back();
    return t;
  }
  std::string file_;
};

// Names of hosts, switches and workloads: letters, digits, '_', '-' or '.'.
inline bool valid_name(const std::string& s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.';
  });
}

// The name of a host of the scenario read from `node` (described as `what`),
// or a file:line:column error if no host has it.
using KnownHost = std::function<std::string(const YAML::Node& node, const std::string& what)>;

}  // namespace rnicsim::scenario
