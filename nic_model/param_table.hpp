// The NIC's parameters, once: every field of NicParams, PcieParams and
// CongestionParams with its name (the field's), how its value is written, its
// range and what it means; its default is the field's initializer. Scenarios
// read their `nic:` keys from these tables and `rnicsim params` lists them; a
// unit test checks that every field has its row.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <variant>

#include "nic_model/nic_params.hpp"

namespace rnicsim::nic {

// How a parameter's value is written.
enum class ParamKind {
  Count,      // a whole number of things (packets, WQEs, reads)
  Cycles,     // a whole number of NIC clock cycles
  Bytes,      // a size: 256, 4KiB
  Frequency,  // 500MHz
  Time,       // 250ns
  IbMtu,      // 256, 512, 1024, 2048, 4096
  Lanes,      // 1, 2, 4, 8, 16, 32
  Rate,       // bits/s: 5Mbps, 100Gbps
  Algorithm,  // a congestion control algorithm (cc_algorithms())
  Recovery,   // a way of loss recovery (kLossRecoveries)
};

template <class T>
using ParamMember = std::variant<uint32_t T::*, uint64_t T::*, sim::Duration T::*, CcAlgorithm T::*, LossRecovery T::*>;

template <class T>
struct ParamKey {
  std::string_view name;
  ParamKind kind;
  uint64_t lo, hi;  // the range (hi 0: any value of the kind)
  ParamMember<T> member;
  bool pow2 = false;
  std::string_view description = {};
};

std::span<const ParamKey<NicParams>> nic_param_keys();
std::span<const ParamKey<PcieParams>> pcie_param_keys();
std::span<const ParamKey<CongestionParams>> congestion_param_keys();
// The members of NicParams that are parameter sets of their own: `pcie`, `congestion`.
inline constexpr size_t kNicNestedParamSets = 2;

}  // namespace rnicsim::nic
