#include "scenario/timeseries.hpp"

#include <filesystem>

#include "sim/output.hpp"

namespace rnicsim::scenario {

Sampler::Sampler(World& world, const std::vector<std::unique_ptr<Workload>>& workloads, sim::Duration interval)
    : world_(world),
      workloads_(workloads),
      interval_(interval),
      last_bytes_(workloads.size(), 0),
      tick_([this] { sample(); }, "sampler.tick") {
  for (const auto& h : world.hosts())
    if (h->port) ports_.emplace_back(h->port->name(), h->port.get());
  for (const auto& sw : world.switches())
    for (size_t i = 0; i < sw->port_count(); ++i) ports_.emplace_back(sw->port(i).name(), &sw->port(i));
}

void Sampler::start() {
  last_time_ = world_.now();
  world_.outside().schedule(tick_, world_.now() + interval_);
}

void Sampler::sample() {
  record();
  // Keep sampling while anything else is going on.
  if (world_.pending()) world_.outside().schedule(tick_, world_.now() + interval_);
}

void Sampler::stop() {
  world_.outside().cancel(tick_);
  bool more = false;
  for (size_t i = 0; i < workloads_.size(); ++i) more |= workloads_[i]->delivered_bytes() != last_bytes_[i];
  if (!more) return;
  if (world_.now() > last_time_ || bytes_.empty()) {
    record();
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
void Sampler::record() {
  const sim::Time now = world_.now();
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
  std::vector<uint64_t> q;
  std::vector<double> p;
  for (const auto& [name, port] : ports_) {
    uint64_t bytes = 0;
    double us = 0;
    for (uint8_t prio = 0; prio < fabric::kPriorities; ++prio) {
      bytes += port->queued_bytes(prio);
      us += port->paused_time(prio).seconds() * 1e6;
    }
    q.push_back(bytes);
    p.push_back(us);
  }
  queued_.push_back(std::move(q));
  paused_us_.push_back(std::move(p));
}

namespace {

// time_us, then a column per name; a row per sample.
template <class T>
void write_table(const std::filesystem::path& file, bool exact_twin, const std::vector<std::string>& columns,
                 const std::vector<double>& times, const std::vector<std::vector<T>>& rows) {
  sim::CsvWriter out(file, exact_twin);
  out.text("time_us");
  for (const std::string& c : columns) out.text(c);
  out.end_row();
  for (size_t i = 0; i < times.size(); ++i) {
    out.number(times[i]);
    for (T v : rows[i]) out.number(v);
    out.end_row();
  }
}

}  // namespace

void Sampler::write(const std::filesystem::path& dir, bool exact_twins) const {
  std::filesystem::create_directories(dir);
  std::vector<std::string> w, p;
  for (const auto& x : workloads_) w.push_back(x->spec().name);
  for (const auto& [name, port] : ports_) p.push_back(name);
  std::vector<std::vector<double>> gbps;
  for (size_t s = 0; s < bytes_.size(); ++s) {
    gbps.emplace_back();
    const double span = spans_[s].seconds();
    for (uint64_t b : bytes_[s]) gbps.back().push_back(span > 0 ? static_cast<double>(b) * 8 / span / 1e9 : 0);
  }
  write_table(dir / "throughput.csv", exact_twins, w, times_, gbps);
  write_table(dir / "delivered.csv", exact_twins, w, times_, bytes_);
  write_table(dir / "queues.csv", exact_twins, p, times_, queued_);
  write_table(dir / "pauses.csv", exact_twins, p, times_, paused_us_);
}

}  // namespace rnicsim::scenario
