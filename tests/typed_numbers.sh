#!/bin/sh
# The wire's numbers keep their types: no raw integer named as a QPN, PSN,
# SRQ number or key is declared in a public header of packet/, nic_model/,
# cm/ or scenario/ (the blocks' ports are in nic_model/ports.hpp). They are
# packet::Qpn, Psn, Srqn, Rkey, Lkey and Qkey.
# The layout of WQEs and CQEs in host memory (nic_model/queue_format.hpp)
# holds them typed too. Left out, on purpose: counters (next_*, max_*, counts
# of PSNs).
# usage: typed_numbers.sh SOURCE_DIR
set -u
cd "$1" || exit 2
# A parameter counts with its name commented out too (`uint32_t /*qpn*/`).
raw='\b(std::)?u?int(8|16|32|64)_t[[:space:]]+(/\*[[:space:]]*)?[A-Za-z_]*(qpn|psn|qp_num|dest_qp|src_qp|srqn|srq_num|rkey|lkey|qkey)_?\b'
found=$(grep -nE "$raw" \
          packet/*.hpp nic_model/*.hpp cm/*.hpp scenario/*.hpp |
        grep -vE '\b(next|max)_[a-z_]*(qpn|psn|srqn)s?_?\b|\bpsns\b')
if [ -n "$found" ]; then
  echo "FAIL: raw integers where a typed number belongs:"
  echo "$found"
  exit 1
fi
# The check itself finds what it looks for.
probe=$(printf 'struct X {\n  uint32_t dest_qpn = 0;\n  virtual void f(uint32_t /*last_psn*/);\n};\n' | grep -cE "$raw")
[ "$probe" = 2 ] || { echo "FAIL: the pattern misses a raw QPN or PSN"; exit 1; }
echo "PASS: the public headers declare QPNs, PSNs, SRQ numbers and keys by type"
