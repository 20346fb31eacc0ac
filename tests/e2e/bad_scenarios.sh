#!/bin/sh
# Each file's first line says "# expect: LINE:COL: TEXT". rnicsim run and
# rnicsim validate must both exit 2 and print FILE:LINE:COL: ...TEXT...
# When the error is in a file the scenario reads (a flow file, a CDF file), the
# second line says "# in: NAME" and FILE is NAME in the same directory.
# usage: bad_scenarios.sh RNICSIM DIR
set -u
rnicsim=$1; dir=$2
fail=0; n=0
for f in "$dir"/*.yaml; do
  n=$((n + 1))
  expect=$(head -1 "$f" | sed 's/^# expect: //')
  pos=${expect%%: *}
  text=${expect#*: }
  where=$f
  case "$(sed -n 2p "$f")" in "# in: "*) where="$dir/$(sed -n 2p "$f" | sed 's/^# in: //')" ;; esac
  for cmd in run validate; do
    out=$("$rnicsim" $cmd "$f" 2>&1 >/dev/null); rc=$?
    if [ $rc -ne 2 ]; then echo "FAIL $f ($cmd): exit $rc, expected 2: $out"; fail=$((fail + 1)); continue; fi
    case "$out" in
      "$where:$pos: "*"$text"*) ;;
      *) echo "FAIL $f ($cmd): got '$out', expected '$where:$pos: ...$text...'"; fail=$((fail + 1)) ;;
    esac
  done
done
echo "$n malformed scenarios, $fail failures"
[ $n -gt 0 ] && [ $fail -eq 0 ]
