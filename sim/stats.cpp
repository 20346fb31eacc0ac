#include "sim/stats.hpp"

#include <algorithm>
#include <bit>

#include "sim/byte_record.hpp"
#include "sim/output.hpp"

namespace rnicsim::sim {

int Histogram::index_of(uint64_t v) {
  if (v < 2 * kSub) return static_cast<int>(v);
  const int msb = 63 - std::countl_zero(v);  // >= kSubBits + 1
  const int shift = msb - kSubBits;
  const int sub = static_cast<int>((v >> shift) & (kSub - 1));
  return (shift + 1) * kSub + sub;
}

uint64_t Histogram::upper_bound_of(int index) {
  if (index < 2 * kSub) return static_cast<uint64_t>(index);
  const int shift = index / kSub - 1;
  const uint64_t sub = static_cast<uint64_t>(index % kSub);
  const uint64_t low = (static_cast<uint64_t>(kSub) + sub) << shift;
  return low + ((uint64_t{1} << shift) - 1);
}

void Histogram::record(uint64_t v) {
  ++buckets_[static_cast<size_t>(index_of(v))];
  ++count_;
  sum_ += v;
  if (v < min_) min_ = v;
  if (v > max_) max_ = v;
}

void Histogram::add(const Histogram& other) {
  for (size_t i = 0; i < buckets_.size(); ++i) buckets_[i] += other.buckets_[i];
  count_ += other.count_;
  sum_ += other.sum_;
  min_ = std::min(min_, other.min_);
  max_ = std::max(max_, other.max_);
}

void Histogram::write(ByteWriter& out) const {
  uint64_t used = 0;
  for (uint64_t b : buckets_) used += b != 0 ? 1 : 0;
  out.put(used);
  for (size_t i = 0; i < buckets_.size(); ++i)
    if (buckets_[i] != 0) out.put(static_cast<uint32_t>(i)), out.put(buckets_[i]);
  out.put(count_), out.put(sum_), out.put(min_), out.put(max_);
}

void Histogram::read(ByteReader& in) {
  buckets_.fill(0);
  const size_t used = in.count(sizeof(uint32_t) + sizeof(uint64_t));
  for (size_t k = 0; k < used; ++k) {
    const auto i = in.take<uint32_t>();
    if (i >= buckets_.size()) throw std::runtime_error("a histogram's bucket is out of range");
    buckets_[i] = in.take<uint64_t>();
  }
  count_ = in.take<uint64_t>(), sum_ = in.take<uint64_t>(), min_ = in.take<uint64_t>(), max_ = in.take<uint64_t>();
}

uint64_t Histogram::percentile(double p) const {
  if (count_ == 0) return 0;
  if (p <= 0) return min();
  uint64_t rank = static_cast<uint64_t>(p * static_cast<double>(count_) + 0.999999999);
  if (rank < 1) rank = 1;
  if (rank > count_) rank = count_;
  uint64_t seen = 0;
  for (int i = 0; i < kBuckets; ++i) {
    seen += buckets_[static_cast<size_t>(i)];
    if (seen >= rank) {
      const uint64_t ub = upper_bound_of(i);
      return ub > max_ ? max_ : (ub < min_ ? min_ : ub);
    }
  }
  return max_;
}

namespace {
// Appends without the search that Json's operator[] makes per key (the keys of
// a std::map are unique already): a world's thousands of counters would
// otherwise cost a quadratic number of name comparisons.
Json::object_t& object_of(Json& j, size_t n) {
  auto& o = j.get_ref<Json::object_t&>();
  o.reserve(n);
  return o;
}
}  // namespace

Json Stats::to_json() const {
  Json counters = Json::object(), histograms = Json::object();
  auto& cs = object_of(counters, counters_.size());
  for (const auto& [name, c] : counters_) cs.emplace_back(name, c.value());
  auto& hs = object_of(histograms, histograms_.size());
  for (const auto& [name, h] : histograms_)
    hs.emplace_back(name, Json{{"count", h.count()},          {"min", h.min()},
                               {"mean", h.mean()},            {"p50", h.percentile(0.5)},
                               {"p90", h.percentile(0.9)},    {"p99", h.percentile(0.99)},
                               {"p999", h.percentile(0.999)}, {"max", h.max()}});
  return {{"counters", std::move(counters)}, {"histograms", std::move(histograms)}};
}

}  // namespace rnicsim::sim
