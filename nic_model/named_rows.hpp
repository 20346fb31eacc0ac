// Tables of named rows (the congestion control algorithms, the ways of loss
// recovery): finding a row by the name scenarios write, and listing the names.
#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace rnicsim::nic {

template <class Row>
constexpr std::optional<size_t> row_named(std::span<const Row> rows, std::string_view name) {
  for (size_t i = 0; i < rows.size(); ++i)
    if (rows[i].name == name) return i;
  return std::nullopt;
}

// Every name, `separator` between them ("none | dcqcn").
template <class Row>
std::string row_names(std::span<const Row> rows, std::string_view separator) {
  std::string out;
  for (const Row& r : rows) out.append(out.empty() ? "" : separator).append(r.name);
  return out;
}

}  // namespace rnicsim::nic
