// Records of plain values as bytes, for what one rank of a run sends another
// at its end (units' reports, workloads' parts, time series): both ends run
// the same program, so fixed-size values go as they lie in memory. The reader
// checks every length against what is left and throws std::runtime_error on
// bytes that end early or hold a count no run could have.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace rnicsim::sim {

// Appends a fixed-size value to bytes kept elsewhere (a buffer reused from
// window to window); ByteWriter does the same into its own.
template <class T>
void append(std::vector<std::byte>& out, const T& v) {
  static_assert(std::is_trivially_copyable_v<T>);
  const auto* p = reinterpret_cast<const std::byte*>(&v);
  out.insert(out.end(), p, p + sizeof v);
}

class ByteWriter {
public:
  template <class T>
  void put(const T& v) {
    append(out_, v);
  }
  void put_string(std::string_view s) {
    put(uint64_t{s.size()});
    const auto* p = reinterpret_cast<const std::byte*>(s.data());
    out_.insert(out_.end(), p, p + s.size());
  }
  void put_bytes(std::span<const std::byte> b) {
    put(uint64_t{b.size()});
    out_.insert(out_.end(), b.begin(), b.end());
  }
  template <class T>
  void put_vector(const std::vector<T>& v) {
    put(uint64_t{v.size()});
    for (const T& x : v) put(x);
  }
  std::vector<std::byte>& bytes() { return out_; }

private:
  std::vector<std::byte> out_;
};

class ByteReader {
public:
  explicit ByteReader(std::span<const std::byte> in) : in_(in) {}
  bool empty() const { return in_.empty(); }
  template <class T>
  T take() {
    static_assert(std::is_trivially_copyable_v<T>);
    need(sizeof(T));
    T v;
    std::memcpy(&v, in_.data(), sizeof v);
    in_ = in_.subspan(sizeof v);
    return v;
  }
  // A count of items of `item_bytes` each, which the bytes left must hold.
  size_t count(size_t item_bytes) {
    const auto n = take<uint64_t>();
    if (item_bytes > 0 && n > in_.size() / item_bytes) throw std::runtime_error("a record's count exceeds its bytes");
    return static_cast<size_t>(n);
  }
  std::span<const std::byte> take_bytes() {
    const size_t n = count(1);
    const std::span<const std::byte> b = in_.first(n);
    in_ = in_.subspan(n);
    return b;
  }
  std::string take_string() {
    const size_t n = count(1);
    std::string s(reinterpret_cast<const char*>(in_.data()), n);
    in_ = in_.subspan(n);
    return s;
  }
  template <class T>
  std::vector<T> take_vector() {
    std::vector<T> v(count(sizeof(T)));
    for (T& x : v) x = take<T>();
    return v;
  }

private:
  void need(size_t n) const {
    if (in_.size() < n) throw std::runtime_error("a record ends early");
  }
  std::span<const std::byte> in_;
};

}  // namespace rnicsim::sim
