#!/usr/bin/env bash
# Runs the benchmarks of issue 7 (and issue 22's HTTP benchmark on Netty, issue 23's HTTP peers) side by side in one
# run and writes docs/BENCHMARKS.md.
#
#   rate-limit-benchmarks/run.sh           full run: JMH 10 x 1 s warm-up, 5 x 1 s measurement, 2 forks (in memory:
#                                          two passes of one fork each)
#   rate-limit-benchmarks/run.sh --quick   under 6 minutes from a fresh clone, build included (the CPU per Redis
#                                          decision adds about 45 s), before the Netty section (about a minute more)
#                                          and the peers section (about four more): 1 x 1 s warm-up, 2 x 1 s
#                                          measurement, 1 fork
#
# Prints one line per ratio, "ratio NAME VALUE" (ours / theirs: above 1 is better, except bytes per key), and
# "# ratio NAME skipped: WHY" for the ratios whose section is not part of the run yet. Raw results (JMH JSON and the
# result files of the other measurements) go to docs/benchmarks/; docs/benchmarks/notes.md, if present, is copied
# into the report. Extra JMH options can be given in JMH_ARGS, e.g. JMH_ARGS='-p path=allowed'.
#
# Redis and HTTP start their own processes (a redis-server without persistence on a free port, never 6379; three
# instances of the servlet sample app, then three of the reactive example on Netty, then seven of the peers app) and
# stop them on exit. They need redis-server, redis-cli, redis-benchmark and wrk on the PATH.
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
	# In memory, quick: 26 forks of about 6 s each were half of a quick run (342 s with a warm build, about 6 minutes
	# from a fresh clone); one warm-up iteration instead of two takes about 26 s off.
	jmh_timing=(-wi 1 -w 1s -i 2 -r 1s -f 1)
	memory_passes=1
	# Redis, quick: the server is the bottleneck, so a short warm-up; one hot key for every side at 64 in flight,
	# ours and SCG's script at one thread, and 100,000 keys for ours, Bucket4j and SCG only.
	redis_timing=(-wi 1 -w 1s -i 2 -r 1s -f 1)
	redis_selection=('dev\.ratelimit\.benchmarks\.(RedisInFlight64\.|RedisOneThread\.(ours|springCloudGateway)$)'
		-p keys=1)
	redis_selection_many=('dev\.ratelimit\.benchmarks\.RedisInFlight64\.(ours|bucket4jLettuce|springCloudGateway)$'
		-p keys=100000)
	redis_second_pass=()
	ceiling_requests=50000
	round_trip_seconds=0.5
	# CPU per Redis decision, quick: the default and the Jedis path against the baseline, one short round each
	cpu_timing=(8 4 1)
	cpu_setups=(memory lettuce jedis)
	cpu_saturated_setups=()
	http_warmup=9
	http_rounds=2
	http_seconds=3
	http_passes=1
	# peers: seven instances, the HTTP sections' quick timing
	peers_warmup=9
	peers_rounds=2
	peers_seconds=3
	peers_passes=1
else
	# In memory, two forks of each benchmark, run as two passes over all of them rather than back to back: a fork's
	# score depends on the machine's load at the time, which drifts over minutes, and on the fork's JIT decisions;
	# passes spread the drift over every benchmark alike. The report pools the passes' iterations.
	jmh_timing=(-wi 10 -w 1s -i 5 -r 1s -f 1)
	memory_passes=2
	# Redis, full: every side, both thread counts, both key counts, one fork, 20 x 1 s warm-up: at 64 in flight the
	# 64 JVM threads starve the JIT compilers, and both ours and SCG's limiter were still climbing after 5 s (ours
	# from 14 k to 30 k decisions/s between the 10th and the 17th second, SCG's from 19 k to 28 k).
	redis_timing=(-wi 20 -w 1s -i 5 -r 1s -f 1)
	redis_selection=('dev\.ratelimit\.benchmarks\.Redis(InFlight64|OneThread)\.')
	redis_selection_many=()
	# A second pass of the one-thread hot-key pair, SCG's first this time: one thread is bound by wake-up latency, and a
	# fork's score moved by up to 1.6x between forks here (ours 6.7 k to 11 k decisions/s) while its iterations agreed
	# within a few percent. The report pools both passes' iterations.
	redis_second_pass=(springCloudGateway ours)
	ceiling_requests=200000
	round_trip_seconds=2
	# CPU per Redis decision, full: 25 s of warm-up per JVM (the JIT compilers were still busy after 15 s here, at 5 µs
	# of CPU per call), 10 s measured, 2 rounds in a rotating order; the client options and the two bounds (a Lettuce
	# round trip, a blocking socket's) that no limiter could go below
	cpu_timing=(25 10 2)
	cpu_setups=(memory lettuce lettuceEpoll lettuceOneIoThread lettucePublishOnScheduler jedisWorkers jedis
		lettuceTrivialScript socketTrivialScript)
	cpu_saturated_setups=(lettuce jedis lettuceTrivialScript socketTrivialScript)
	http_warmup=45
	http_rounds=5
	http_seconds=10
	# Two passes, each with three fresh instances of the app: an instance's steady state depends on its JIT's
	# decisions, and two instances of the same jar, measured in alternating rounds, differed by up to 8% here.
	http_passes=2
	# peers: seven instances instead of three, so fewer rounds than the HTTP sections' to stay under about 25
	# minutes: two passes of fresh instances still, each of 60 s warm-up and 3 rounds of 10 s per instance, about 12
	# minutes a pass (seven instances starting together took 95 s of it here, in a quick run). 30 s of warm-up left the
	# two-tier instance compiling (async-profiler: 6.8% of its samples in the JIT compilers after 30 s at one
	# connection and 20 s at 32; 1% after 50 s), and its first round in a pass at two thirds of its later ones.
	peers_warmup=60
	peers_rounds=3
	peers_seconds=10
	peers_passes=2
fi
http_connections=32
log_dir="$root/rate-limit-benchmarks/target/run-logs"
sample_jar="$root/sample-geocoding-app/target/sample-geocoding-app-0.1.0-SNAPSHOT.jar"
reactive_jar="$root/reactive-example-app/target/reactive-example-app-0.1.0-SNAPSHOT.jar"
peers_jar="$root/peers-benchmark-app/target/peers-benchmark-app-0.1.0-SNAPSHOT.jar"
started=$(date +%s)

echo "== build"
# The repackaged jars of the apps are not rebuilt when only a module they depend on changed: start from none.
rm -f "$sample_jar" "$sample_jar.original" "$reactive_jar" "$reactive_jar.original" "$peers_jar" "$peers_jar.original"
./mvnw -B -q -pl rate-limit-benchmarks,sample-geocoding-app,reactive-example-app,peers-benchmark-app -am package \
	-DskipTests

mkdir -p "$results" "$log_dir"
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
	local pass
	for pass in $(seq 1 "$memory_passes"); do
		jmh "memory-pass$pass" 'dev\.ratelimit\.benchmarks\.(OneKeyOneThread|OneKeyTwoThreads|ManyKeys)\.'
	done
	echo "== retained heap per key"
	for library in ours bucket4j bucket4jSharedBandwidth; do
		java -Xms4g -Xmx4g -XX:+UseParallelGC -cp "$jar" dev.ratelimit.benchmarks.RetainedHeap \
			"$library" 1000000 "$results/heap-$library.json"
	done
	# Ours again with a key of 8 KB made for each call, as a hostile client's header would be: 50,000 of them, about
	# 400 MB of keys had the store kept them.
	java -Xms4g -Xmx4g -XX:+UseParallelGC -cp "$jar" dev.ratelimit.benchmarks.RetainedHeap \
		ours 50000 "$results/heap-ours-8192-char-keys.json" 8192
}

# Processes this script starts (redis-server, sample app instances): all stopped on exit, whatever happens.
started_pids=()
cleanup() {
	local pid
	for pid in "${started_pids[@]}"; do
		kill "$pid" 2>/dev/null || true
	done
	for pid in "${started_pids[@]}"; do
		wait "$pid" 2>/dev/null || true
	done
}
trap cleanup EXIT

# Starts the redis-server of the HTTP sections unless one runs already.
ensure_redis() {
	if [[ -z ${redis_port:-} ]]; then
		start_redis
	fi
}

# A TCP port nothing listens on (never 6379: the machine's own Redis is not ours to use).
free_port() {
	local port
	while true; do
		port=$(( 20000 + RANDOM % 30000 ))
		if ! (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
			echo "$port"
			return
		fi
	done
}

# Starts a redis-server of our own, without persistence, on a free port; sets redis_port.
start_redis() {
	redis_port=$(free_port)
	redis-server --port "$redis_port" --bind 127.0.0.1 --save "" --appendonly no --loglevel warning \
		>"$log_dir/redis-$redis_port.log" 2>&1 &
	started_pids+=($!)
	redis_pid=$!
	local i
	for i in $(seq 1 50); do
		if redis-cli -p "$redis_port" ping >/dev/null 2>&1; then
			return
		fi
		sleep 0.1
	done
	echo "redis-server did not start on port $redis_port" >&2
	exit 1
}

# The raw ceiling: redis-benchmark (a C client, 50 connections, no pipelining) on EVALSHA of a trivial script and
# on PING, as {"measurements": [...]} in redis-ceiling.json.
redis_ceiling() {
	local sha evalsha ping
	sha=$(redis-cli -p "$redis_port" script load "return 1")
	evalsha=$(redis-benchmark -p "$redis_port" -c 50 -P 1 -n "$ceiling_requests" --csv evalsha "$sha" 0 \
		| tail -1 | cut -d, -f2,7 | tr -d '"')
	ping=$(redis-benchmark -p "$redis_port" -c 50 -P 1 -n "$ceiling_requests" --csv -t ping_mbulk \
		| tail -1 | cut -d, -f2,7 | tr -d '"')
	echo "ceiling: EVALSHA ${evalsha%,*}/s (p99 ${evalsha#*,} ms), PING ${ping%,*}/s (p99 ${ping#*,} ms)"
	cat >"$results/redis-ceiling.json" <<-JSON
		{"measurements": [
		  {"name": "RedisCeiling.evalsha", "score": ${evalsha%,*}, "unit": "ops/s"},
		  {"name": "RedisCeiling.evalsha.p99", "score": ${evalsha#*,}, "unit": "ms"},
		  {"name": "RedisCeiling.ping", "score": ${ping%,*}, "unit": "ops/s"},
		  {"name": "RedisCeiling.ping.p99", "score": ${ping#*,}, "unit": "ms"}
		]}
	JSON
}

run_redis() {
	echo "== redis: one thread and 64 in flight, one hot key and 100,000 keys, ceiling, round trips, CPU per decision"
	start_redis
	redis_ceiling
	BENCH_REDIS_PORT=$redis_port java -cp "$jar" dev.ratelimit.benchmarks.RedisRoundTrips "$round_trip_seconds" \
		"$results/redis-round-trips.json" ours oursSlidingWindow oursLease bucket4jLettuce springCloudGateway
	# shellcheck disable=SC2086
	BENCH_REDIS_PORT=$redis_port java -jar "$jar" "${redis_selection[@]}" "${redis_timing[@]}" -rf json \
		-rff "$results/redis.json" ${JMH_ARGS:-}
	local side
	for side in "${redis_second_pass[@]}"; do
		# shellcheck disable=SC2086
		BENCH_REDIS_PORT=$redis_port java -jar "$jar" "dev\\.ratelimit\\.benchmarks\\.RedisOneThread\\.$side\$" \
			-p keys=1 "${redis_timing[@]}" -rf json -rff "$results/redis-one-thread-pass2-$side.json" ${JMH_ARGS:-}
	done
	if (( ${#redis_selection_many[@]} > 0 )); then
		# shellcheck disable=SC2086
		BENCH_REDIS_PORT=$redis_port java -jar "$jar" "${redis_selection_many[@]}" "${redis_timing[@]}" -rf json \
			-rff "$results/redis-many-keys.json" ${JMH_ARGS:-}
	fi
	# The application's CPU per synchronous decision, by client set-up (issue 23): 32 callers making about 5,000 calls
	# a second together, as the HTTP benchmark's Redis instance, then as many as they can. Each set-up in JVMs of its
	# own; target/epoll holds Netty's native transport for the lettuceEpoll set-up (the others keep Java's NIO).
	BENCH_REDIS_PORT=$redis_port BENCH_REDIS_PID=$redis_pid java -cp "$jar:$root/rate-limit-benchmarks/target/epoll/*" \
		dev.ratelimit.benchmarks.RedisDecisionCpu 5000 "${cpu_timing[@]}" "$results/redis-decision-cpu.json" \
		"${cpu_setups[@]}"
	if (( ${#cpu_saturated_setups[@]} > 0 )); then
		BENCH_REDIS_PORT=$redis_port BENCH_REDIS_PID=$redis_pid java -cp "$jar:$root/rate-limit-benchmarks/target/epoll/*" \
			dev.ratelimit.benchmarks.RedisDecisionCpu 0 "${cpu_timing[@]}" "$results/redis-decision-cpu-saturated.json" \
			"${cpu_saturated_setups[@]}"
	fi
	redis_cli_info=$(redis-cli -p "$redis_port" info server | grep -E '^redis_version' | tr -d '\r')
	echo "redis-server: ${redis_cli_info#*:}"
}

# The app an HTTP section measures, set by run_http, run_netty and run_peers: its jar, the request wrk sends (with
# X-API-Key: demo-paid), the arguments that raise its limits, the names of its instances' logs and the prefix of its
# measurements. Every instance allows nearly every request (the limits that apply to the request raised to 10^8 per
# second), so that each request runs the limiter's allowed path and then the endpoint.
app_jar=
app_path=
app_limits=()
app_log=
measurement=
# Its variants, one instance each: their names in start and rotation order, each one's start arguments (words
# separated by spaces), those on Redis (whose redis-server CPU per request is reported), those whose failed Redis calls
# are counted and the path that tells their count, and whether a variant that does not start is reported as blocked
# (the peers) rather than ending the run.
app_variants=()
declare -A app_variant_args=()
app_redis_variants=()
app_failure_variants=()
app_failures_path=
app_variants_may_block=false
# The versions of the app's libraries that the report names (JSON members, "name": "version"), or none.
app_versions=

# Starts an instance of the app on a free port with the given arguments; sets app_port.
start_app() {
	local name=$1
	shift
	app_port=$(free_port)
	java -Xms512m -Xmx512m -jar "$app_jar" --server.port="$app_port" "${app_limits[@]}" \
		--logging.level.root=WARN "$@" >"$(app_log_file "$name")" 2>&1 &
	started_pids+=($!)
	app_ports[$name]=$app_port
	app_pids[$name]=$!
}

# Stops instance $1 and forgets its pid, so that the exit trap never signals a process that has since taken it.
stop_app() {
	local pid=${app_pids[$1]} kept=() p
	kill "$pid" 2>/dev/null || true
	wait "$pid" 2>/dev/null || true
	for p in "${started_pids[@]}"; do
		if [[ $p != "$pid" ]]; then
			kept+=("$p")
		fi
	done
	started_pids=("${kept[@]}")
}

# Waits until instance $1 answers 200; fails (status 1, with a message) if it exits or does not answer in 2 minutes.
wait_for_app() {
	local name=$1 port=${app_ports[$1]} i
	for i in $(seq 1 240); do
		if [[ $(curl -s -o /dev/null -w '%{http_code}' -H 'X-API-Key: demo-paid' \
			"http://127.0.0.1:$port$app_path" 2>/dev/null) == 200 ]]; then
			return 0
		fi
		if ! kill -0 "${app_pids[$name]}" 2>/dev/null; then
			break
		fi
		sleep 0.5
	done
	echo "the app ($name) did not answer on port $port; see $(app_log_file "$name")" >&2
	return 1
}

app_log_file() {
	echo "$log_dir/$app_log-$1${http_pass:+-pass$http_pass}.log"
}

# Why instance $1 did not start, from its log: the description of Spring Boot's failure report, else the root cause
# of the exception it logged, else its first error line.
start_failure() {
	local file reason
	file=$(app_log_file "$1")
	reason=$(awk 'found && NF { print; exit } /^Description:/ { found = 1 }' "$file" 2>/dev/null)
	if [[ -z $reason ]]; then
		reason=$({ grep -E '^Caused by: ' "$file" | tail -1 | sed 's/^Caused by: //'
			grep -m1 -E '^[A-Za-z_$.]+(Exception|Error)(: |$)' "$file"; grep -m1 -E 'ERROR' "$file"; } 2>/dev/null \
			| head -1 | cut -c1-300)
	fi
	echo "${reason:-did not answer within 2 minutes}" | tr -d '"\\'
}

# wrk's latency ("1.23ms", "456.00us", "1.02s") in milliseconds.
to_ms() {
	awk -v v="$1" 'BEGIN { n = v + 0; if (v ~ /us$/) n /= 1000; else if (v ~ /ms$/) n += 0; else if (v ~ /s$/) n *= 1000;
		printf "%.3f", n }'
}

# Instance $1's count of failed Redis calls so far, at $app_failures_path: the actuator's ratelimit.backend.failures
# (0 before the first), or a plain number.
backend_failures() {
	local count
	count=$(curl -s "http://127.0.0.1:${app_ports[$1]}$app_failures_path" \
		| sed -n 's/.*"statistic":"COUNT","value":\([0-9]*\).*/\1/p; t; s/^\([0-9][0-9]*\)$/\1/p' | head -1)
	echo "${count:-0}"
}

# Whether word $1 is one of the following words.
among() {
	local word=$1 other
	shift
	for other in "$@"; do
		if [[ $other == "$word" ]]; then
			return 0
		fi
	done
	return 1
}

# CPU time (user + system, in clock ticks) that process $1 has used so far.
cpu_ticks() {
	awk '{ print $14 + $15 }' "/proc/$1/stat"
}

# One wrk run of $2 seconds at $3 connections against instance $1; sets rps, p99 (ms), requests, and the CPU ticks
# the instance (app_ticks) and the Redis server (redis_ticks) used meanwhile.
wrk_round() {
	local name=$1 seconds=$2 connections=$3 out app_before redis_before
	app_before=$(cpu_ticks "${app_pids[$name]}")
	redis_before=$(cpu_ticks "$redis_pid")
	out=$(wrk -t1 -c"$connections" -d"${seconds}s" --latency -H 'X-API-Key: demo-paid' \
		"http://127.0.0.1:${app_ports[$name]}$app_path")
	app_ticks=$(( $(cpu_ticks "${app_pids[$name]}") - app_before ))
	redis_ticks=$(( $(cpu_ticks "$redis_pid") - redis_before ))
	requests=$(awk '/requests in/ { print $1 }' <<<"$out")
	rps=$(awk '/^Requests\/sec:/ { print $2 }' <<<"$out")
	p99=$(to_ms "$(awk '$1 == "99%" { print $2 }' <<<"$out")")
	non2xx=$(awk '/Non-2xx or 3xx responses:/ { print $5 }' <<<"$out")
}

# The variants' instances run side by side. Each is warmed up first with one connection (so that the JIT compilers
# get a core while requests run: under full load they starve, and an instance takes minutes to reach its steady state
# here), then briefly at full load. Then the instances are measured in turn, round after round, in a rotating order,
# so that the machine's changing load falls on all of them alike. A full run does this in two passes, each with fresh
# instances, and pools their rounds: an instance's score is the mean of its rounds (its error half the spread of its
# rounds), its p99 the median of its rounds' p99. The measurements are named $measurement.VARIANT (.off, .memory,
# .redis for the sample) and written to $1.json; the lines printed start with $1. A variant that does not start is
# recorded as blocked, with the reason from its log, when $app_variants_may_block; otherwise the run ends.
measure_http() {
	local section=$1
	if ! command -v wrk >/dev/null; then
		echo "wrk is not installed (apt-get install -y wrk): HTTP benchmarks skipped" >&2
		return
	fi
	if [[ -z ${redis_port:-} ]]; then
		start_redis
	fi
	declare -gA app_ports=() app_pids=()
	local names=("${app_variants[@]}") started_names name round i pass rps p99 non2xx spread lines=() args=()
	declare -A sum=() p99s=() bad=() low=() high=() ticks=() server_ticks=() served=() rounds_of=() failures=()
	declare -A failures_before=() blocked=()
	for pass in $(seq 1 "$http_passes"); do
		http_pass=$pass
		for name in "${names[@]}"; do
			read -r -a args <<<"${app_variant_args[$name]:-}"
			start_app "$name" "${args[@]}"
		done
		started_names=("${names[@]}")
		names=()
		for name in "${started_names[@]}"; do
			if wait_for_app "$name"; then
				names+=("$name")
			elif [[ $app_variants_may_block == true ]]; then
				blocked[$name]=$(start_failure "$name")
				echo "$section pass $pass $name blocked: ${blocked[$name]}"
				stop_app "$name"
			else
				exit 1
			fi
		done
		for name in "${names[@]}"; do
			wrk_round "$name" $(( http_warmup * 2 / 3 )) 1
			wrk_round "$name" $(( http_warmup / 3 )) "$http_connections"
			echo "$section pass $pass $name warmed up: $rps requests/s at the end"
		done
		for name in "${app_failure_variants[@]}"; do
			if among "$name" "${names[@]}"; then
				failures_before[$name]=$(backend_failures "$name")
			fi
		done
		for round in $(seq 1 "$http_rounds"); do
			for i in $(seq 0 $(( ${#names[@]} - 1 ))); do
				name=${names[$(( (i + round) % ${#names[@]} ))]}
				wrk_round "$name" "$http_seconds" "$http_connections"
				echo "$section pass $pass round $round $name: $rps requests/s, p99 $p99 ms, non-2xx ${non2xx:-0}"
				sum[$name]=$(awk -v a="${sum[$name]:-0}" -v b="$rps" 'BEGIN { print a + b }')
				low[$name]=$(awk -v a="${low[$name]:-}" -v b="$rps" 'BEGIN { print (a == "" || b < a) ? b : a }')
				high[$name]=$(awk -v a="${high[$name]:-0}" -v b="$rps" 'BEGIN { print (b > a) ? b : a }')
				p99s[$name]="${p99s[$name]:-} $p99"
				bad[$name]=$(( ${bad[$name]:-0} + ${non2xx:-0} ))
				ticks[$name]=$(( ${ticks[$name]:-0} + app_ticks ))
				server_ticks[$name]=$(( ${server_ticks[$name]:-0} + redis_ticks ))
				served[$name]=$(( ${served[$name]:-0} + requests ))
				rounds_of[$name]=$(( ${rounds_of[$name]:-0} + 1 ))
			done
		done
		for name in "${app_failure_variants[@]}"; do
			if among "$name" "${names[@]}"; then
				failures[$name]=$(( ${failures[$name]:-0} + $(backend_failures "$name") - ${failures_before[$name]} ))
			fi
		done
		for name in "${names[@]}"; do
			stop_app "$name"
		done
	done
	# Redis calls that failed in the measured rounds (timed out on the loaded machine) were decided by the failure
	# policy instead (the sample's: the local fallback, for a second each): report how many, as they make the Redis
	# instance look faster than it is.
	for name in "${app_failure_variants[@]}"; do
		if [[ -n ${failures[$name]:-} ]]; then
			echo "$section $name: ${failures[$name]} Redis calls failed in the measured rounds and were decided locally"
			lines+=("  {\"name\": \"$measurement.$name.backendFailures\", \"score\": ${failures[$name]}, \"unit\": \"calls\"}")
		fi
	done
	local tick_micros
	tick_micros=$(awk -v t="$(getconf CLK_TCK)" 'BEGIN { print 1000000 / t }')
	for name in "${app_variants[@]}"; do
		if [[ -n ${blocked[$name]:-} ]]; then
			lines+=("  {\"name\": \"$measurement.$name\", \"blocked\": \"${blocked[$name]}\"}")
			continue
		fi
		rps=$(awk -v s="${sum[$name]}" -v n="${rounds_of[$name]}" 'BEGIN { printf "%.2f", s / n }')
		# the error: half the spread of the rounds (what the machine's drift did to this instance)
		spread=$(awk -v a="${low[$name]}" -v b="${high[$name]}" 'BEGIN { printf "%.2f", (b - a) / 2 }')
		p99=$(tr ' ' '\n' <<<"${p99s[$name]}" | sed '/^$/d' | sort -g | awk '{ v[NR] = $1 } END { printf "%.3f", (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }')
		echo "$section $name: $rps requests/s (mean of ${rounds_of[$name]} rounds), p99 $p99 ms (median), non-2xx ${bad[$name]}"
		lines+=("  {\"name\": \"$measurement.$name\", \"score\": $rps, \"error\": $spread, \"unit\": \"requests/s\"}")
		lines+=("  {\"name\": \"$measurement.$name.p99\", \"score\": $p99, \"unit\": \"ms\"}")
		lines+=("  {\"name\": \"$measurement.$name.non2xx\", \"score\": ${bad[$name]}, \"unit\": \"responses\"}")
		# CPU per request (user + system time of the process over the measured rounds / their requests): less
		# sensitive to the machine's other load than requests/s.
		local cpu server_cpu
		cpu=$(awk -v t="${ticks[$name]}" -v u="$tick_micros" -v n="${served[$name]}" 'BEGIN { printf "%.1f", t * u / n }')
		server_cpu=$(awk -v t="${server_ticks[$name]}" -v u="$tick_micros" -v n="${served[$name]}" \
			'BEGIN { printf "%.1f", t * u / n }')
		echo "$section $name: CPU per request: app $cpu µs, redis-server $server_cpu µs"
		lines+=("  {\"name\": \"$measurement.$name.cpuPerRequest\", \"score\": $cpu, \"unit\": \"µs\"}")
		if among "$name" "${app_redis_variants[@]}"; then
			lines+=("  {\"name\": \"$measurement.$name.serverCpuPerRequest\", \"score\": $server_cpu, \"unit\": \"µs\"}")
		fi
	done
	{
		echo '{"measurements": ['
		local IFS=$'\n'
		sed '$!s/$/,/' <<<"${lines[*]}"
		if [[ -n $app_versions ]]; then
			echo "], \"versions\": {$app_versions}}"
		else
			echo ']}'
		fi
	} >"$results/$section.json"
}

# The sample's and the reactive example's three ways: limiter off, on in memory, on with Redis (the redis profile).
sample_variants() {
	app_variants=(off memory redis)
	app_variant_args=([off]=--ratelimit.enabled=false [memory]=
		[redis]="--spring.profiles.active=redis --spring.data.redis.port=$redis_port")
	app_redis_variants=(redis)
	app_failure_variants=(redis)
	app_failures_path=/actuator/metrics/ratelimit.backend.failures
	app_variants_may_block=false
	app_versions=
}

run_http() {
	echo "== http: the sample app, limiter off, on in memory, on with Redis (${http_connections} connections, ${http_passes} x ${http_rounds} rounds of ${http_seconds} s after ${http_warmup} s warm-up each)"
	app_jar=$sample_jar
	app_path='/api/reverse?lat=34&lon=-6'
	app_limits=(--ratelimit.policies.api.tiers.paid[0].rate=100000000/1s
		--ratelimit.policies.backend-capacity.limits[0].rate=100000000/1s)
	app_log=app
	measurement=Http
	ensure_redis
	sample_variants
	measure_http http
}

# The same three ways, the same load and timing, for the reactive example on Netty: a Mono handler behind the
# WebFilter, its two policies (the paid tier and the quote burst) raised as the sample's are.
run_netty() {
	echo "== http on netty: the reactive example, limiter off, on in memory, on with Redis (${http_connections} connections, ${http_passes} x ${http_rounds} rounds of ${http_seconds} s after ${http_warmup} s warm-up each)"
	app_jar=$reactive_jar
	app_path='/api/quote?symbol=ACME'
	app_limits=(--ratelimit.policies.api.tiers.paid[0].rate=100000000/1s
		--ratelimit.policies.quote-burst.limits[0].rate=100000000/1s
		--ratelimit.policies.quote-burst.limits[0].capacity=100000000)
	app_log=app-netty
	measurement=HttpNetty
	ensure_redis
	sample_variants
	measure_http http-netty
}

# Issue 23: the same endpoint limited by us and by our peers, in the peers app (one Spring MVC endpoint on Tomcat,
# GET /api/hello, limited per API key in its tier), one instance per variant (its Spring profile): no limiter; ours in
# memory, on Redis, on Redis with a reservoir of 100 permits; Resilience4j; Bucket4j's starter in memory and on Redis.
# The paid tier is raised to 10^8 per second for every variant (peers.tiers.paid, which each reads). The same wrk load
# and rotation as the HTTP sections, with the shorter peers timing above.
run_peers() {
	local http_warmup=$peers_warmup http_rounds=$peers_rounds http_seconds=$peers_seconds http_passes=$peers_passes
	echo "== http peers: one endpoint, no limiter, ours (memory, Redis, Redis reservoir), Resilience4j, Bucket4j's starter (memory, Redis) (${http_connections} connections, ${http_passes} x ${http_rounds} rounds of ${http_seconds} s after ${http_warmup} s warm-up each)"
	app_jar=$peers_jar
	app_path=/api/hello
	app_limits=(--peers.tiers.paid.permits=100000000 --peers.tiers.paid.period-seconds=1)
	app_log=app-peers
	measurement=HttpPeers
	ensure_redis
	app_variants=(off memory redis redis-reservoir resilience4j bucket4j-memory bucket4j-redis)
	app_variant_args=()
	local variant
	for variant in "${app_variants[@]}"; do
		app_variant_args[$variant]="--spring.profiles.active=$variant --spring.data.redis.port=$redis_port"
	done
	app_redis_variants=(redis redis-reservoir bucket4j-redis)
	app_failure_variants=(redis redis-reservoir)
	app_failures_path=/peers/backend-failures
	app_variants_may_block=true
	# the peers' versions, as the jar holds them
	app_versions=$(jar tf "$peers_jar" | sed -n -E \
		's#^BOOT-INF/lib/(resilience4j-spring-boot4|bucket4j-spring-boot-starter|bucket4j_jdk17-core|jedis)-([0-9][^/]*)\.jar$#"\1": "\2"#p' \
		| paste -sd, -)
	measure_http http-peers
}

# BENCH_SECTIONS picks sections for a partial run while working on one (default: all five); the report then shows
# the others as pending.
for section in ${BENCH_SECTIONS:-memory redis http netty peers}; do
	"run_$section"
done

echo "== report"
commit=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
if [[ -n $(git status --porcelain -- rate-limit-core/src/main rate-limit-spring-boot-starter/src/main \
	sample-geocoding-app/src/main reactive-example-app/src/main peers-benchmark-app/src/main rate-limit-benchmarks \
	2>/dev/null) ]]; then
	commit="$commit + uncommitted changes"
fi
java -cp "$jar" dev.ratelimit.benchmarks.BenchmarkReport "$results" "$root/docs/BENCHMARKS.md" "$mode" "$commit" \
	"$results/notes.md"
echo "== wrote docs/BENCHMARKS.md in $(( $(date +%s) - started )) s"
