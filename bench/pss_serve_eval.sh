#!/bin/bash
# serve + an evaluation run (+ predict) on one snapshot at the same time, with each process's
# RSS and PSS sampled by bench/pss_sample.py (bench/README.md, "Memory plan (item 4), measured").
#
# usage: bench/pss_serve_eval.sh OUT_DIR SERENQA_BINARY SNAPSHOT BENCHMARK_DIR [predict]
#   1. `serenqa serve --graph SNAPSHOT` on 127.0.0.1:8977, waited for until it listens and
#      Ask's name index is built (graphs past 1M nodes build it at start; WAIT_INDEX=0 for
#      smaller graphs, which build it at the first question);
#   2. then `serenqa eval --tasks t1` over BENCHMARK_DIR (offline agents), and with `predict`
#      `serenqa predict` beside it; 3. serve is stopped once they end.
# OUT_DIR/sample.json holds the maxima; OUT_DIR/serve-alone.smaps serve's smaps_rollup before
# the evaluation started. Everything runs under `nice -n 10`.
set -u
D=$1; BIN=$2; SNAP=$3; BENCH=$4; PRED=${5:-}
HERE=$(cd "$(dirname "$0")" && pwd)
rm -rf "$D"; mkdir -p "$D"; cd "$D" || exit 1
specs="serve=$D/serve.pid eval=$D/eval.pid"
[ -n "$PRED" ] && specs="$specs predict=$D/predict.pid"
python3 "$HERE/pss_sample.py" "$D/sample.json" "$D/stop" $specs &
SP=$!
sleep 1
nice -n 10 "$BIN" --quiet serve --graph "$SNAP" --addr 127.0.0.1:8977 --runs "$D/serve-runs" \
  --db "$D/serve.sqlite" --no-baseline > "$D/serve.out" 2> "$D/serve.err" &
SPID=$!; echo $SPID > "$D/serve.pid"
for _ in $(seq 1 900); do
  if grep -q "serving on" "$D/serve.out" \
      && { [ "${WAIT_INDEX:-1}" = 0 ] || grep -q "understanding index built" "$D/serve.err"; }; then
    break
  fi
  kill -0 $SPID 2>/dev/null || { echo "serve ended early: $(tail -n 1 "$D/serve.err")"; break; }
  sleep 1
done
cat /proc/$SPID/smaps_rollup > "$D/serve-alone.smaps" 2>/dev/null
nice -n 10 "$BIN" --quiet eval --graph "$SNAP" --tasks t1 --bench "$BENCH" --runs "$D/eval-runs" \
  --no-cache > "$D/eval.out" 2> "$D/eval.err" &
EP=$!; echo $EP > "$D/eval.pid"
if [ -n "$PRED" ]; then
  nice -n 10 "$BIN" --quiet predict --graph "$SNAP" --no-store --out "$D/pred.tsv" \
    > "$D/predict.out" 2> "$D/predict.err" &
  PP=$!; echo $PP > "$D/predict.pid"
fi
wait $EP; echo "eval rc=$?" >> "$D/eval.out"
if [ -n "$PRED" ]; then wait $PP; echo "predict rc=$?" >> "$D/predict.out"; fi
touch "$D/stop"; wait $SP
kill $SPID; wait $SPID 2>/dev/null
echo "done: $D/sample.json"
