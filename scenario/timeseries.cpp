#include "scenario/timeseries.hpp"

#include <filesystem>
#include <fstream>

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

void Sampler::start() { world_.sim().scheduler().schedule_in(tick_, interval_); }

void Sampler::sample() {
  times_.push_back(world_.sim().now().since_start().seconds() * 1e6);
  std::vector<double> g;
  for (size_t i = 0; i < workloads_.size(); ++i) {
    const uint64_t b = workloads_[i]->bytes();
    g.push_back(static_cast<double>(b - last_bytes_[i]) * 8 / interval_.seconds() / 1e9);
    last_bytes_[i] = b;
  }
  gbps_.push_back(std::move(g));
  std::vector<double> q, p;
  for (const auto& [name, port] : ports_) {
    uint64_t bytes = 0;
    double us = 0;
    for (uint8_t prio = 0; prio < fabric::kPriorities; ++prio) {
      bytes += port->queued_bytes(prio);
      us += port->paused_time(prio).seconds() * 1e6;
    }
    q.push_back(static_cast<double>(bytes));
    p.push_back(us);
  }
  queued_.push_back(std::move(q));
  paused_us_.push_back(std::move(p));
  // Keep sampling while anything else is going on.
  if (world_.sim().scheduler().pending() > 0) world_.sim().scheduler().schedule_in(tick_, interval_);
}

namespace {

void write_table(const std::filesystem::path& file, const std::vector<std::string>& columns,
                 const std::vector<double>& times, const std::vector<std::vector<double>>& rows) {
  std::ofstream out(file);
  out << "time_us";
  for (const std::string& c : columns) out << ',' << c;
  out << '\n';
  for (size_t i = 0; i < times.size(); ++i) {
    out << times[i];
    for (double v : rows[i]) out << ',' << v;
    out << '\n';
  }
}

}  // namespace

void Sampler::write(const std::string& dir) const {
  std::filesystem::create_directories(dir);
  std::vector<std::string> w, p;
  for (const auto& x : workloads_) w.push_back(x->spec().name);
  for (const auto& [name, port] : ports_) p.push_back(name);
  write_table(std::filesystem::path(dir) / "throughput.csv", w, times_, gbps_);
  write_table(std::filesystem::path(dir) / "queues.csv", p, times_, queued_);
  write_table(std::filesystem::path(dir) / "pauses.csv", p, times_, paused_us_);
}

}  // namespace rnicsim::scenario
