// An error in a scenario or a file it reads: where (file:line:column, 0:0 when
// the error is not at a place in the file) and what was expected.
#pragma once

#include <stdexcept>
#include <string>
#include <utility>

namespace rnicsim::scenario {

class ScenarioError : public std::runtime_error {
public:
  ScenarioError(std::string file, int line, int column, const std::string& message)
      : std::runtime_error(file + ":" + std::to_string(line) + ":" + std::to_string(column) + ": " + message),
        file_(std::move(file)), line_(line), column_(column) {}
  int line() const { return line_; }
  int column() const { return column_; }

private:
  std::string file_;
  int line_, column_;
};

}  // namespace rnicsim::scenario
