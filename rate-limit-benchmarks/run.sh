#!/usr/bin/env bash
# Runs the benchmarks of issue 7 side by side in one run and writes docs/BENCHMARKS.md.
#
#   rate-limit-benchmarks/run.sh           full run: JMH 10 x 1 s warm-up, 5 x 1 s measurement, 2 forks
#   rate-limit-benchmarks/run.sh --quick   under 6 minutes: 3 x 1 s warm-up, 3 x 1 s measurement, 1 fork
#
# Prints one line per ratio, "ratio NAME VALUE" (ours / theirs: above 1 is better, except bytes per key), and
# "# ratio NAME skipped: WHY" for the ratios whose section is not part of the run yet. Raw results (JMH JSON and the
# result files of the other measurements) go to docs/benchmarks/; docs/benchmarks/notes.md, if present, is copied
# into the report. Extra JMH options can be given in JMH_ARGS, e.g. JMH_ARGS='-p path=allowed'.
set -euo pipefail

cd "$(dirname "$0")/.."
root=$(pwd)
mode=full
case "${1:-}" in
	--quick) mode=quick ;;
	"") ;;
	*) echo "usage: $0 [--quick]" >&2; exit 2 ;;
esac

results="$root/docs/benchmarks"
jar="$root/rate-limit-benchmarks/target/benchmarks.jar"
if [[ $mode == quick ]]; then
	jmh_timing=(-wi 3 -w 1s -i 3 -r 1s -f 1)
else
	jmh_timing=(-wi 10 -w 1s -i 5 -r 1s -f 2)
fi
started=$(date +%s)

echo "== build"
./mvnw -B -q -pl rate-limit-benchmarks -am package -DskipTests

mkdir -p "$results"
# One report per run: results of an earlier run must not mix into this one.
find "$results" -maxdepth 1 -name '*.json' -delete

jmh() {
	local name=$1
	shift
	# shellcheck disable=SC2086
	java -jar "$jar" "$@" "${jmh_timing[@]}" -prof gc -rf json -rff "$results/$name.json" ${JMH_ARGS:-}
}

run_memory() {
	echo "== in memory: one key at 1 and 2 threads, 1,000,000 keys"
	jmh memory 'dev\.ratelimit\.benchmarks\.(OneKeyOneThread|OneKeyTwoThreads|ManyKeys)\.'
	echo "== retained heap per key"
	for library in ours bucket4j bucket4jSharedBandwidth; do
		java -Xms4g -Xmx4g -XX:+UseParallelGC -cp "$jar" dev.ratelimit.benchmarks.RetainedHeap \
			"$library" 1000000 "$results/heap-$library.json"
	done
}

run_redis() {
	# Slot for the Redis benchmarks (issue 7): start a server, run the JMH class(es) named RedisHotKey64 etc. into
	# "$results/redis.json" (jmh redis 'dev\.ratelimit\.benchmarks\.Redis'), and write the redis-benchmark ceiling as
	# {"measurements": [{"name": "RedisCeiling.evalsha", "score": ..., "unit": "ops/s"}]} to
	# "$results/redis-ceiling.json". BenchmarkReport.RATIOS names the measurements it divides.
	echo "== redis: not part of this run yet (pending the Redis backend)"
}

run_http() {
	# Slot for the HTTP benchmarks (issue 7): start the sample app with the limiter off, on in memory, on with Redis;
	# write {"measurements": [{"name": "Http.off", ...}, {"name": "Http.memory", ...}, {"name": "Http.redis", ...}]}
	# to "$results/http.json".
	echo "== http: not part of this run yet (pending the starter)"
}

run_memory
run_redis
run_http

echo "== report"
commit=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
if [[ -n $(git status --porcelain -- rate-limit-core/src/main rate-limit-benchmarks 2>/dev/null) ]]; then
	commit="$commit + uncommitted changes"
fi
java -cp "$jar" dev.ratelimit.benchmarks.BenchmarkReport "$results" "$root/docs/BENCHMARKS.md" "$mode" "$commit" \
	"$results/notes.md"
echo "== wrote docs/BENCHMARKS.md in $(( $(date +%s) - started )) s"
