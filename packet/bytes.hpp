// Big-endian (network order) and little-endian load/store helpers.
//
// These functions never check bounds: the caller owns the bounds (header views
// check them once when they are constructed). They work over std::byte,
// uint8_t, unsigned char and char buffers and compile to single loads/stores
// plus a byte swap.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <type_traits>

namespace rnicsim::packet {

template <typename B>
concept ByteLike = std::is_same_v<std::remove_const_t<B>, std::byte> ||
                   std::is_same_v<std::remove_const_t<B>, std::uint8_t> ||
                   std::is_same_v<std::remove_const_t<B>, unsigned char> ||
                   std::is_same_v<std::remove_const_t<B>, char>;

namespace detail {
template <ByteLike B>
constexpr std::uint8_t u8_of(B b) noexcept {
  return static_cast<std::uint8_t>(b);
}
template <ByteLike B>
constexpr B byte_of(std::uint64_t v) noexcept {
  return static_cast<B>(static_cast<std::uint8_t>(v & 0xFFu));
}
}  // namespace detail

/// Reads an N-byte (1..8) big-endian unsigned integer.
template <std::size_t N, ByteLike B>
constexpr std::uint64_t load_be(const B* p) noexcept {
  static_assert(N >= 1 && N <= 8);
  std::uint64_t v = 0;
  for (std::size_t i = 0; i < N; ++i) v = (v << 8) | detail::u8_of(p[i]);
  return v;
}

/// Writes the low N bytes (1..8) of v big-endian.
template <std::size_t N, ByteLike B>
constexpr void store_be(B* p, std::uint64_t v) noexcept {
  static_assert(N >= 1 && N <= 8);
  for (std::size_t i = 0; i < N; ++i) p[N - 1 - i] = detail::byte_of<B>(v >> (8 * i));
}

template <ByteLike B> constexpr std::uint8_t load_u8(const B* p) noexcept { return detail::u8_of(*p); }
template <ByteLike B> constexpr std::uint16_t load_be16(const B* p) noexcept { return static_cast<std::uint16_t>(load_be<2>(p)); }
template <ByteLike B> constexpr std::uint32_t load_be24(const B* p) noexcept { return static_cast<std::uint32_t>(load_be<3>(p)); }
template <ByteLike B> constexpr std::uint32_t load_be32(const B* p) noexcept { return static_cast<std::uint32_t>(load_be<4>(p)); }
template <ByteLike B> constexpr std::uint64_t load_be64(const B* p) noexcept { return load_be<8>(p); }

template <ByteLike B> constexpr void store_u8(B* p, std::uint8_t v) noexcept { *p = static_cast<B>(v); }
template <ByteLike B> constexpr void store_be16(B* p, std::uint16_t v) noexcept { store_be<2>(p, v); }
/// Stores the low 24 bits of v.
template <ByteLike B> constexpr void store_be24(B* p, std::uint32_t v) noexcept { store_be<3>(p, v); }
template <ByteLike B> constexpr void store_be32(B* p, std::uint32_t v) noexcept { store_be<4>(p, v); }
template <ByteLike B> constexpr void store_be64(B* p, std::uint64_t v) noexcept { store_be<8>(p, v); }

/// Little-endian 32/16 bit (the ICRC and VCRC travel least significant byte first).
template <ByteLike B>
constexpr std::uint32_t load_le32(const B* p) noexcept {
  return static_cast<std::uint32_t>(detail::u8_of(p[0]) | (detail::u8_of(p[1]) << 8) |
                                    (detail::u8_of(p[2]) << 16)) |
         (static_cast<std::uint32_t>(detail::u8_of(p[3])) << 24);
}
template <ByteLike B>
constexpr void store_le32(B* p, std::uint32_t v) noexcept {
  for (std::size_t i = 0; i < 4; ++i) p[i] = detail::byte_of<B>(v >> (8 * i));
}
template <ByteLike B>
constexpr std::uint16_t load_le16(const B* p) noexcept {
  return static_cast<std::uint16_t>(detail::u8_of(p[0]) | (detail::u8_of(p[1]) << 8));
}
template <ByteLike B>
constexpr void store_le16(B* p, std::uint16_t v) noexcept {
  p[0] = detail::byte_of<B>(v);
  p[1] = detail::byte_of<B>(v >> 8);
}

// Span + offset forms (offset + width must be within the span: the caller's check).
constexpr std::uint16_t load_be16(std::span<const std::byte> s, std::size_t off) noexcept { return load_be16(s.data() + off); }
constexpr std::uint32_t load_be24(std::span<const std::byte> s, std::size_t off) noexcept { return load_be24(s.data() + off); }
constexpr std::uint32_t load_be32(std::span<const std::byte> s, std::size_t off) noexcept { return load_be32(s.data() + off); }
constexpr std::uint64_t load_be64(std::span<const std::byte> s, std::size_t off) noexcept { return load_be64(s.data() + off); }
constexpr void store_be16(std::span<std::byte> s, std::size_t off, std::uint16_t v) noexcept { store_be16(s.data() + off, v); }
constexpr void store_be24(std::span<std::byte> s, std::size_t off, std::uint32_t v) noexcept { store_be24(s.data() + off, v); }
constexpr void store_be32(std::span<std::byte> s, std::size_t off, std::uint32_t v) noexcept { store_be32(s.data() + off, v); }
constexpr void store_be64(std::span<std::byte> s, std::size_t off, std::uint64_t v) noexcept { store_be64(s.data() + off, v); }

}  // namespace rnicsim::packet
