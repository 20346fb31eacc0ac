#include "scenario/timeseries.hpp"

#include <bit>
#include <filesystem>
#include <stdexcept>
#include <type_traits>

#include "sim/output.hpp"

namespace rnicsim::scenario {

namespace {

// Every port of the world, hosts' first, then each switch's in order.
std::vector<std::pair<std::string, const fabric::Port*>> ports_of(World& world) {
  std::vector<std::pair<std::string, const fabric::Port*>> ports;
  for (const auto& h : world.hosts())
    if (h->port) ports.emplace_back(h->port->name(), h->port.get());
  for (const auto& sw : world.switches())
    for (size_t i = 0; i < sw->port_count(); ++i) ports.emplace_back(sw->port(i).name(), &sw->port(i));
  return ports;
}

}  // namespace

Sampler::Sampler(World& world, const std::vector<std::unique_ptr<Workload>>& workloads, sim::Duration interval)
    : world_(world),
      workloads_(workloads),
      interval_(interval),
      ports_(ports_of(world)),
      queued_(ports_.size()),
      paused_us_(ports_.size()),
      last_bytes_(workloads.size(), 0),
      tick_([this] { sample(); }, "sampler.tick") {}

void Sampler::start() {
  last_time_ = world_.now();
  world_.outside().schedule(tick_, world_.now() + interval_);
}

void Sampler::sample() {
  record(world_.now());
  // Keep sampling while anything else is going on (on any rank).
  if (world_.pending_anywhere()) world_.outside().schedule(tick_, world_.now() + interval_);
}

void Sampler::stop() {
  world_.outside().cancel(tick_);
  bool more = false;
  for (size_t i = 0; i < workloads_.size(); ++i) more |= workloads_[i]->delivered_bytes() != last_bytes_[i];
  more = world_.any_rank(more);
  if (!more) return;
  const sim::Time now = world_.now_anywhere();
  if (now > last_time_ || bytes_.empty()) {
    record(now);
    return;
  }
  // Delivered after the last sample at the same instant: that row holds it.
  for (size_t i = 0; i < workloads_.size(); ++i) {
    const uint64_t b = workloads_[i]->delivered_bytes();
    bytes_.back()[i] += b - last_bytes_[i];
    last_bytes_[i] = b;
  }
}

// One row: what each workload delivered since the last row, and the ports now.
void Sampler::record(sim::Time now) {
  times_.push_back(now.since_start().seconds() * 1e6);
  spans_.push_back(now - last_time_);
  last_time_ = now;
  std::vector<uint64_t> delivered;
  for (size_t i = 0; i < workloads_.size(); ++i) {
    const uint64_t b = workloads_[i]->delivered_bytes();
    delivered.push_back(b - last_bytes_[i]);
    last_bytes_[i] = b;
  }
  bytes_.push_back(std::move(delivered));
  for (size_t i = 0; i < ports_.size(); ++i) {
    const fabric::Port& port = *ports_[i].second;
    // Read what lies together in the port: its total and which priorities
    // were ever paused (adding a priority's zero would leave the sum as it is).
    double us = 0;
    for (uint32_t m = port.ever_paused(); m != 0; m &= m - 1)
      us += port.paused_time(static_cast<uint8_t>(__builtin_ctz(m))).seconds() * 1e6;
    queued_.set(i, port.queued_total());
    paused_us_.set(i, us);
  }
  queued_.end_row();
  paused_us_.end_row();
}

void Sampler::write(sim::ByteWriter& out) const {
  out.put(uint64_t{bytes_.size()});
  for (const auto& row : bytes_) out.put_vector(row);
  queued_.write(out);
  paused_us_.write(out);
}

void Sampler::merge(sim::ByteReader& in) {
  if (in.count(0) != bytes_.size()) throw std::runtime_error("a time series from another rank has other rows");
  for (auto& row : bytes_) {
    const auto theirs = in.take_vector<uint64_t>();
    if (theirs.size() != row.size()) throw std::runtime_error("a time series from another rank has other workloads");
    for (size_t i = 0; i < row.size(); ++i) row[i] += theirs[i];
  }
  queued_.merge(in);
  paused_us_.merge(in);
}

namespace {

// Whether two values would be written alike: by their bits, so that -0.0
// does not take 0.0's text.
template <class T>
bool same_bits(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) return std::bit_cast<uint64_t>(double{a}) == std::bit_cast<uint64_t>(double{b});
  else return a == b;
}

// time_us, then a column per name; a row per sample. `each_row(f)` calls
// f(i, values) for each row in order, values of T. A column's text is made
// only when its value changes: a time series of a large fabric has millions
// of fields, nearly all as in the row before.
template <class T, class EachRow>
void write_table(const std::filesystem::path& file, bool exact_twin, const std::vector<std::string>& columns,
                 const std::vector<double>& times, EachRow&& each_row) {
  sim::CsvWriter out(file, exact_twin);
  out.text("time_us");
  for (const std::string& c : columns) out.text(c);
  out.end_row();
  std::vector<T> last(columns.size());
  std::vector<sim::CsvWriter::Cell> cells(columns.size(), out.cell(T{}));
  each_row([&](size_t i, const std::vector<T>& values) {
    if (values.size() != columns.size()) throw std::logic_error("a time series' row has another width than its names");
    out.number(times[i]);
    for (size_t c = 0; c < values.size(); ++c) {
      if (!same_bits(values[c], last[c])) cells[c] = out.cell(last[c] = values[c]);
      out.put(cells[c]);
    }
    out.end_row();
  });
}

template <class T>
auto rows_of(const std::vector<std::vector<T>>& rows) {
  return [&rows](auto&& row) {
    for (size_t i = 0; i < rows.size(); ++i) row(i, rows[i]);
  };
}

template <class T>
auto rows_of(const ChangeRows<T>& rows) {
  return [&rows](auto&& row) { rows.each_row(row); };
}

}  // namespace

std::vector<std::function<void()>> Sampler::writers(const std::filesystem::path& dir, bool exact_twins) const {
  std::filesystem::create_directories(dir);
  auto port_names = [this] {
    std::vector<std::string> p;
    for (const auto& [name, port] : ports_) p.push_back(name);
    return p;
  };
  return {
      [=, this] { write_table<uint64_t>(dir / "queues.csv", exact_twins, port_names(), times_, rows_of(queued_)); },
      [=, this] { write_table<double>(dir / "pauses.csv", exact_twins, port_names(), times_, rows_of(paused_us_)); },
      [=, this] {
        std::vector<std::string> w;
        for (const auto& x : workloads_) w.push_back(x->spec().name);
        std::vector<std::vector<double>> gbps;
        for (size_t s = 0; s < bytes_.size(); ++s) {
          gbps.emplace_back();
          const double span = spans_[s].seconds();
          for (uint64_t b : bytes_[s]) gbps.back().push_back(span > 0 ? static_cast<double>(b) * 8 / span / 1e9 : 0);
        }
        write_table<double>(dir / "throughput.csv", exact_twins, w, times_, rows_of(gbps));
        write_table<uint64_t>(dir / "delivered.csv", exact_twins, w, times_, rows_of(bytes_));
      },
  };
}

}  // namespace rnicsim::scenario
