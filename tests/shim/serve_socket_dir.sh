#!/bin/bash
# rnicsim serve --socket PATH creates only what is missing, changes no existing
# directory, refuses one that others may write into (unless sticky), and never
# removes what is not a stale socket of its own.
# usage: serve_socket_dir.sh RNICSIM
set -u
rnicsim=$1
tmp=$(mktemp -d /tmp/rnicsim-test.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
fail=0
mode() { stat -c %a "$1"; }
# serve_briefly PATH: serves for a moment; its exit code
serve_briefly() {
  "$rnicsim" serve --socket "$1" --idle-exit 1 > "$tmp/log" 2>&1 &
  local d=$!
  for _ in $(seq 40); do [ -S "$1" ] && break; kill -0 $d 2>/dev/null || break; sleep 0.05; done
  kill -INT $d 2>/dev/null
  wait $d
}
expect() {  # what condition...
  local what=$1
  shift
  "$@" || { echo "FAIL: $what"; cat "$tmp/log"; fail=1; }
}
mkdir -m 0755 "$tmp/public"
serve_briefly "$tmp/public/daemon.sock"
expect "serves in an existing 0755 directory" grep -q "socket $tmp/public/daemon.sock" "$tmp/log"
expect "leaves the existing directory's mode alone" [ "$(mode "$tmp/public")" = 755 ]
expect "removes its own socket when it exits" [ ! -e "$tmp/public/daemon.sock" ]
serve_briefly "$tmp/new/deeper/daemon.sock"
expect "creates the missing directories" [ -d "$tmp/new/deeper" ]
expect "creates them private" [ "$(mode "$tmp/new/deeper")" = 700 ]
mkdir "$tmp/shared" && chmod 0777 "$tmp/shared"
serve_briefly "$tmp/shared/daemon.sock"
expect "refuses a directory others can write into" grep -q "can be written by other users" "$tmp/log"
expect "leaves that directory's mode alone" [ "$(mode "$tmp/shared")" = 777 ]
mkdir "$tmp/sticky" && chmod 1777 "$tmp/sticky"
serve_briefly "$tmp/sticky/daemon.sock"
expect "serves in a sticky directory like /tmp" grep -q "socket $tmp/sticky/daemon.sock" "$tmp/log"
echo "precious" > "$tmp/public/file"
serve_briefly "$tmp/public/file"
expect "refuses a path that is not a socket" grep -q "not a socket; not removing it" "$tmp/log"
expect "keeps the file" grep -q precious "$tmp/public/file"
[ $fail -eq 0 ] && echo PASS
exit $fail
