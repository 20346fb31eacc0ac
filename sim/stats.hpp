// Statistics: counters and histograms with percentiles, written as JSON.
#pragma once

#include <nlohmann/json_fwd.hpp>

#include <array>
#include <cstdint>
#include <map>
#include <string>

namespace rnicsim::sim {

class ByteReader;
class ByteWriter;

class Counter {
public:
  void add(uint64_t n = 1) { value_ += n; }
  uint64_t value() const { return value_; }

private:
  uint64_t value_ = 0;
};

// Log-linear histogram of non-negative integers (HDR style): exact below 128, then
// 64 sub-buckets per power of two, so any percentile is within 1/64 (1.6 %) of the
// true value. Fixed size; recording never allocates.
class Histogram {
public:
  void record(uint64_t v);
  // Adds another histogram's samples: as if each had been recorded here.
  void add(const Histogram& other);
  uint64_t count() const { return count_; }
  uint64_t min() const { return count_ ? min_ : 0; }
  uint64_t max() const { return max_; }
  double mean() const { return count_ ? static_cast<double>(sum_) / static_cast<double>(count_) : 0.0; }
  // The smallest recorded-bucket value v such that at least p (0..1) of the samples are <= v.
  uint64_t percentile(double p) const;
  // As bytes (byte_record.hpp): the buckets that hold samples, then the
  // totals; read() replaces what this one holds.
  void write(ByteWriter& out) const;
  void read(ByteReader& in);

private:
  static constexpr int kSubBits = 6;
  static constexpr int kSub = 1 << kSubBits;
  static constexpr int kBuckets = (64 - kSubBits) * kSub + 2 * kSub;
  static int index_of(uint64_t v);
  static uint64_t upper_bound_of(int index);

  std::array<uint64_t, kBuckets> buckets_{};
  uint64_t count_ = 0;
  uint64_t sum_ = 0;
  uint64_t min_ = UINT64_MAX;
  uint64_t max_ = 0;
};

// Named statistics of one run. Names are dotted paths ("host0.nic.tx_packets");
// references stay valid for the registry's lifetime.
class Stats {
public:
  Counter& counter(const std::string& name) { return counters_[name]; }
  Histogram& histogram(const std::string& name) { return histograms_[name]; }
  const std::map<std::string, Counter>& counters() const { return counters_; }
  const std::map<std::string, Histogram>& histograms() const { return histograms_; }
  // {"counters": {name: value}, "histograms": {name: {count, min, mean, p50, p90, p99, p999, max}}}
  nlohmann::ordered_json to_json() const;

private:
  std::map<std::string, Counter> counters_;
  std::map<std::string, Histogram> histograms_;
};

}  // namespace rnicsim::sim
