#include "sim/output.hpp"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <stdexcept>

namespace rnicsim::sim {

size_t format_double(double v, DoubleForm form, std::span<char, kDoubleChars> buf) {
  if (!std::isfinite(v)) return 0;
  if (form == DoubleForm::Hex) return static_cast<size_t>(std::snprintf(buf.data(), buf.size(), "%a", v));
  char* end = std::to_chars(buf.data(), buf.data() + buf.size() - 2, v).ptr;
  if (std::string_view(buf.data(), end).find_first_of(".e") == std::string_view::npos) {
    *end++ = '.';
    *end++ = '0';
  }
  return static_cast<size_t>(end - buf.data());
}

std::string format_double(double v, DoubleForm form) {
  std::array<char, kDoubleChars> buf;
  return std::string(buf.data(), format_double(v, form, buf));
}

Json output_document(std::string_view kind) { return {{"schema", kind}, {"schema_version", kSchemaVersion}}; }

namespace {

void indent(std::ostream& out, int depth) { out << std::string(static_cast<size_t>(depth) * 2, ' '); }

void write_value(std::ostream& out, const Json& j, DoubleForm form, int depth);

// A string or a plain value by nlohmann (its escaping; bad UTF-8 replaced, not thrown).
void write_plain(std::ostream& out, const Json& j) { out << j.dump(-1, ' ', false, Json::error_handler_t::replace); }

bool all_plain(const Json& array) {
  for (const Json& e : array)
    if (e.is_structured()) return false;
  return true;
}

void write_members(std::ostream& out, const Json& j, DoubleForm form, int depth) {
  const bool object = j.is_object();
  const bool inline_array = !object && all_plain(j);
  out << (object ? '{' : '[');
  const char* sep = inline_array ? "" : "\n";
  for (auto it = j.begin(); it != j.end(); ++it) {
    out << sep;
    sep = inline_array ? ", " : ",\n";
    if (!inline_array) indent(out, depth + 1);
    if (object) {
      write_plain(out, Json(it.key()));
      out << ": ";
    }
    write_value(out, *it, form, depth + 1);
  }
  if (!inline_array && !j.empty()) {
    out << '\n';
    indent(out, depth);
  }
  out << (object ? '}' : ']');
}

void write_value(std::ostream& out, const Json& j, DoubleForm form, int depth) {
  if (j.is_structured()) return write_members(out, j, form, depth);
  if (!j.is_number_float()) return write_plain(out, j);
  const std::string text = format_double(j.get<double>(), form);
  if (text.empty()) out << "null";
  else if (form == DoubleForm::Hex) out << '"' << text << '"';
  else out << text;
}

std::ofstream open(const std::filesystem::path& file) {
  std::ofstream out(file);
  if (!out) throw std::runtime_error("cannot write " + file.string());
  return out;
}

std::filesystem::path twin_of(const std::filesystem::path& file) { return file.string() + ".exact"; }

}  // namespace

void write_json(std::ostream& out, const Json& j, DoubleForm form) {
  write_value(out, j, form, 0);
  out << '\n';
}

void write_json_file(const std::filesystem::path& file, const Json& j, bool exact_twin) {
  std::ofstream out = open(file);
  write_json(out, j);
  if (!exact_twin) return;
  std::ofstream twin = open(twin_of(file));
  write_json(twin, j, DoubleForm::Hex);
}

std::string csv_field(std::string_view s) {
  if (s.find_first_of(",\"\r\n") == std::string_view::npos) return std::string(s);
  std::string q = "\"";
  for (char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
  return q + '"';
}

CsvWriter::CsvWriter(const std::filesystem::path& file, bool exact_twin) : out_(open(file)) {
  if (exact_twin) twin_.emplace(open(twin_of(file)));
}

CsvWriter& CsvWriter::raw(std::string_view field, std::string_view twin_field) {
  if (row_started_) {
    row_ += ',';
    if (twin_) twin_row_ += ',';
  }
  row_started_ = true;
  row_ += field;
  if (twin_) twin_row_ += twin_field;
  return *this;
}

CsvWriter& CsvWriter::text(std::string_view s) {
  const std::string f = csv_field(s);
  return raw(f, f);
}

// The hex form only for a twin: most files have none.
CsvWriter::Texts CsvWriter::texts(double v, Buffers& b) const {
  const size_t n = format_double(v, DoubleForm::Shortest, b[0]);
  const size_t h = twin_ ? format_double(v, DoubleForm::Hex, b[1]) : 0;
  return {{b[0].data(), n}, {b[1].data(), h}};
}

void CsvWriter::end_row() {
  // A row goes out in one write: a stream's per-field sentries cost more than
  // the formatting in a time series of millions of fields.
  row_ += '\n';
  out_.write(row_.data(), static_cast<std::streamsize>(row_.size()));
  row_.clear();
  if (twin_) {
    twin_row_ += '\n';
    twin_->write(twin_row_.data(), static_cast<std::streamsize>(twin_row_.size()));
    twin_row_.clear();
  }
  row_started_ = false;
}

}  // namespace rnicsim::sim
