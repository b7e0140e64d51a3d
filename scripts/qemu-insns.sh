#!/usr/bin/env bash
# qemu-insns.sh: how many arm64 instructions one Invoke of MODEL executes
# on an emulated CPU, for comparing kernels where timing under emulation
# says nothing (qemu-user 7.2 has no TCG plugins to count with). qemu logs
# each translation block's instructions once (-d in_asm) and each execution
# of a block (-d exec, with nochain so that chained blocks are logged too);
# the count is the sum over executions of the block's length, grouped by the
# function the block starts in. delego bench runs once with one Invoke and
# once with two (no warmup), and the difference is one Invoke: Prepare,
# weight packing and start-up cancel out. The Go runtime's idle spinning,
# which depends on the emulation's wall time, does not cancel: the line
# "kernels" sums only delego's core/kernels functions, the figure to
# compare; "all" is every instruction of the difference. Logging makes qemu
# some 50x slower (minutes for MobileNet V2).
#
#   scripts/qemu-insns.sh MODEL [QEMU_CPU] [TOP]
#   e.g. scripts/qemu-insns.sh ../shared/models/mobilenet_v2_1.0_224_quant.tflite cortex-a72
#   QEMU_CPU: cortex-a72 (NEON without SDOT) or max (with SDOT); TOP: the
#   functions of the difference to list (default 15).
set -euo pipefail
MODEL=${1:?usage: scripts/qemu-insns.sh MODEL [QEMU_CPU] [TOP]}
CPU=${2:-cortex-a72}
TOP=${3:-15}
test -f "$MODEL" || { echo "qemu-insns.sh: no model at $MODEL" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
GOARCH=arm64 go build -o "$work/delego" ./cmd/delego

# count reads a qemu log on stdin and prints "function instructions" lines.
count() {
  awk '
    /^IN:/ { blk = 1; first = ""; n = 0; fn = $2; next }
    blk && /^0x[0-9a-f]+:/ { a = $1; sub(":", "", a); if (first == "") first = a; n++; next }
    blk { if (first != "") { sub(/^0x0*/, "", first); len[first] = n; name[first] = fn }; blk = 0 }
    /^Trace/ { split($0, f, "/"); pc = f[2]; sub(/^0*/, "", pc); runs[pc]++ }
    END {
      for (pc in runs) if (pc in len) by[name[pc]] += runs[pc] * len[pc]; else by["?"] += runs[pc]
      for (fn in by) print fn, by[fn]
    }'
}

for invokes in 1 2; do
  mkfifo "$work/log$invokes"
  count <"$work/log$invokes" >"$work/count$invokes" &
  GOMAXPROCS=1 qemu-aarch64-static -cpu "$CPU" -d in_asm,exec,nochain -D "$work/log$invokes" \
    "$work/delego" bench "$MODEL" --runs "$invokes" --warmup 0 >"$work/bench$invokes" 2>&1 ||
    { echo "qemu-insns.sh: delego bench failed:" >&2; cat "$work/bench$invokes" >&2; exit 1; }
  wait
done
echo "$(basename "$MODEL") on qemu -cpu $CPU, instructions of one Invoke:"
awk -v top="$TOP" '
  FNR == NR { one[$1] = $2; next }
  { d[$1] = $2 - one[$1] }
  END {
    for (fn in one) if (!(fn in d)) d[fn] = -one[fn]
    for (fn in d) { all += d[fn]; if (fn ~ /delego\/core\/kernels/) k += d[fn] }
    printf "kernels %d\nall %d\n", k, all
    for (fn in d) if (fn ~ /delego\/core\/kernels/) print d[fn], fn | "sort -n -r | head -" top
  }' "$work/count1" "$work/count2"
