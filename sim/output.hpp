// Machine-readable output files (docs/OUTPUTS.md): JSON documents built with
// nlohmann-json and CSV tables, every number written so that it reads back as
// exactly the value computed.
//
// Doubles are written in their shortest round-trip form (std::to_chars), not by
// nlohmann's serializer: its Grisu2 always round-trips but now and then writes a
// digit more than needed (355.84181967340197 for 355.841819673402). A value that
// is not finite is never written as NaN or inf: JSON gets null, CSV an empty field.
//
// An exact twin (FILE.exact beside FILE, on request) holds the same document
// with every double as a C99 hex float ("0x1.8p+1"; in JSON as a string): the
// bits themselves, by another path, for tests that check the decimal text.
#pragma once

#include <nlohmann/json.hpp>

#include <array>
#include <charconv>
#include <concepts>
#include <filesystem>
#include <fstream>
#include <optional>
#include <span>
#include <ostream>
#include <string>
#include <string_view>

namespace rnicsim::sim {

// Objects keep their keys in the order they were added.
using Json = nlohmann::ordered_json;

// The version of every output format docs/OUTPUTS.md describes: it goes up when
// a field changes its meaning or goes away (not when one is added).
inline constexpr int kSchemaVersion = 1;
// An output document's first members: {"schema": kind, "schema_version": N}.
Json output_document(std::string_view kind);

enum class DoubleForm : uint8_t { Shortest, Hex };

// `v` as text: the shortest decimal that reads back as `v` (a whole value keeps
// ".0", so it stays a double to JSON readers), or a hex float. "" if not finite.
std::string format_double(double v, DoubleForm form = DoubleForm::Shortest);
// The same into `buf`; returns the length.
inline constexpr size_t kDoubleChars = 64;
size_t format_double(double v, DoubleForm form, std::span<char, kDoubleChars> buf);

// `j` as JSON, indented by two spaces (arrays of plain values on one line).
void write_json(std::ostream& out, const Json& j, DoubleForm form = DoubleForm::Shortest);
// Writes `file`, and with `exact_twin` FILE.exact as well.
void write_json_file(const std::filesystem::path& file, const Json& j, bool exact_twin);

// A CSV file, one row after another. Fields are quoted as RFC 4180 says: a
// field holding a comma, a double quote, CR or LF is put in double quotes, and
// each double quote in it doubled. Lines end in LF.
class CsvWriter {
public:
  CsvWriter(const std::filesystem::path& file, bool exact_twin);
  CsvWriter& text(std::string_view s);
  CsvWriter& number(double v) {  // empty when not finite
    Buffers b;
    return put(texts(v, b));
  }
  template <std::integral T>
  CsvWriter& number(T v) {
    Buffers b;
    return put(texts(v, b));
  }
  CsvWriter& empty() { return raw("", ""); }
  // A number's text (and its twin's), made once for many rows: a time
  // series' columns keep their values for most of its rows.
  struct Cell {
    std::string text, twin;
  };
  Cell cell(double v) const {
    Buffers b;
    return own(texts(v, b));
  }
  template <std::integral T>
  Cell cell(T v) const {
    Buffers b;
    return own(texts(v, b));
  }
  CsvWriter& put(const Cell& c) { return raw(c.text, c.twin); }
  // Ends the row and writes it; a row not ended is not written.
  void end_row();

private:
  // A number's text and its twin's, in a buffer on the caller's stack: the
  // one place that says how a number is written (number() and cell()).
  using Buffers = std::array<std::array<char, kDoubleChars>, 2>;
  struct Texts {
    std::string_view text, twin;
  };
  Texts texts(double v, Buffers& b) const;
  template <std::integral T>
  static Texts texts(T v, Buffers& b) {
    const std::string_view digits(b[0].data(), std::to_chars(b[0].data(), b[0].data() + b[0].size(), v).ptr);
    return {digits, digits};
  }
  static Cell own(const Texts& t) { return {std::string(t.text), std::string(t.twin)}; }
  CsvWriter& put(const Texts& t) { return raw(t.text, t.twin); }
  CsvWriter& raw(std::string_view field, std::string_view twin_field);

  std::ofstream out_;
  std::optional<std::ofstream> twin_;
  std::string row_, twin_row_;  // the row being built
  bool row_started_ = false;
};

// `s` as one RFC 4180 field.
std::string csv_field(std::string_view s);

}  // namespace rnicsim::sim
