#!/usr/bin/env bash
# The reliability campaign of issue 18: fault injection and load, written to docs/RELIABILITY.md; and issue 32's
# application integration: its findings against the sample and the reactive example, before and after the fixes.
#
#   rate-limit-benchmarks/reliability.sh           full run, about an hour: saturation at 16, 128, 256 and 512
#                                                  connections, 10 Redis restarts per failure mode, 10 M keys, a
#                                                  10-minute soak
#   rate-limit-benchmarks/reliability.sh --quick   shorter phases, fewer points, 3 restarts, 1 M keys, a 1-minute
#                                                  soak: under 10 minutes for issue 18's scenarios, about 5 more for
#                                                  app-integration
#   ... --update                                   rewrite only the sections of the scenarios run, keeping the rest
#                                                  of docs/RELIABILITY.md (RELIABILITY_SCENARIOS=app-integration
#                                                  rate-limit-benchmarks/reliability.sh --quick --update: 5 minutes)
#
# Everything runs on this machine, against servers the campaign starts on free ports (never 6379): redis-server
# (standalone, Sentinel, cluster), a latency proxy, the sample app's jar, wrk. Each scenario runs in a JVM of its own
# (rate-limit-benchmarks/src/main/java/dev/ratelimit/benchmarks/reliability), bounded in time; its figures are printed
# as "reliability <scenario>.<case>.<measure> <value>" and kept in rate-limit-benchmarks/target/reliability/*.tsv,
# with every process's log under logs/. Whatever happens (a failure, a timeout, Ctrl-C), every process it started is
# stopped. RELIABILITY_SCENARIOS picks scenarios (default: all, in the order below); RELIABILITY_NOTE is a sentence the
# report quotes at its top (what the run is for). The app-integration scenario also runs the jars of the commit before
# issue 32 (before_commit below), which this script builds once into rate-limit-benchmarks/target/ from
# `git archive` (no worktree, nothing installed).
#
# Needs redis-server (7.x), wrk and a JDK 17+ with jcmd on the PATH.
set -euo pipefail

cd "$(dirname "$0")/.."
root=$(pwd)
mode=full
update=""
for argument in "$@"; do
	case "$argument" in
		--quick) mode=quick ;;
		--update) update=--update ;;
		*) echo "usage: $0 [--quick] [--update]" >&2; exit 2 ;;
	esac
done

results="$root/rate-limit-benchmarks/target/reliability"
jar="$root/rate-limit-benchmarks/target/benchmarks.jar"
app_jar="$root/sample-geocoding-app/target/sample-geocoding-app-0.1.0-SNAPSHOT.jar"
reactive_jar="$root/reactive-example-app/target/reactive-example-app-0.1.0-SNAPSHOT.jar"
scenarios=${RELIABILITY_SCENARIOS:-saturation restarts sentinel cluster slow-redis key-flood fuzz soak app-integration}

# app-integration sends its own requests: wrk and jcmd serve the other scenarios.
tools="redis-server java"
if [[ -n $(tr ' ' '\n' <<<"$scenarios" | grep -vx -e app-integration -e '' || true) ]]; then
	tools="$tools wrk jcmd"
fi
for tool in $tools; do
	if ! command -v "$tool" >/dev/null; then
		echo "$tool is not on the PATH (apt-get install -y redis-server wrk; a JDK 17+ for java and jcmd)" >&2
		exit 1
	fi
done

# The last commit before issue 32's fixes (AppIntegration.BEFORE_COMMIT), and where its jars are built.
before_commit=5f1fba7
before_dir="$root/rate-limit-benchmarks/target/before-$before_commit"
started=$(date +%s)

# The longest each scenario may take (seconds), quick and full, before it is stopped: on an idle machine each takes
# well under half of it; a busy one starts the sample app slowly.
limit() {
	local quick full
	case $1 in
		saturation) quick=420 full=2400 ;;
		restarts) quick=420 full=1500 ;;
		sentinel | cluster) quick=240 full=360 ;;
		slow-redis) quick=300 full=600 ;;
		key-flood) quick=180 full=900 ;;
		fuzz) quick=300 full=1600 ;;
		soak) quick=300 full=1200 ;;
		app-integration) quick=480 full=720 ;;
		*) quick=300 full=900 ;;
	esac
	if [[ $mode == quick ]]; then echo "$quick"; else echo "$full"; fi
}

# The JVM options of a scenario: the key flood runs in process, with a fixed heap.
jvm_options() {
	case $1 in
		key-flood) echo "-Xms1g -Xmx1g -XX:+UseG1GC" ;;
		*) echo "-Xmx256m" ;;
	esac
}

# Every process a scenario starts is stopped by that scenario's JVM (also on SIGINT and SIGTERM). Should the JVM be
# killed outright, its children's pids are in $results/pids: stop those still running that are ours (redis-server,
# wrk, a java of the sample app or of the campaign, jcmd), by pid only.
child=""
cleanup() {
	local pid command
	if [[ -n $child ]] && kill -0 "$child" 2>/dev/null; then
		kill -TERM "$child" 2>/dev/null || true
		wait "$child" 2>/dev/null || true
	fi
	if [[ -f $results/pids ]]; then
		while read -r pid; do
			if [[ ! -r /proc/$pid/cmdline ]]; then
				continue
			fi
			command=$(tr '\0' ' ' 2>/dev/null <"/proc/$pid/cmdline" || true)
			if [[ $command == *redis-server* || $command == *wrk* || $command == *sample-geocoding-app* \
				|| $command == *reactive-example-app* || $command == *jcmd* || $command == *benchmarks.jar* ]]; then
				kill -KILL "$pid" 2>/dev/null || true
			fi
		done <"$results/pids"
	fi
}
trap cleanup EXIT
trap 'echo "interrupted" >&2; exit 130' INT TERM

# The code measured: the commit, and whether the build below includes changes not committed yet.
commit=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
if [[ -n $(git status --porcelain -- rate-limit-core/src rate-limit-spring-boot-starter/src sample-geocoding-app/src \
	reactive-example-app/src rate-limit-benchmarks 2>/dev/null) ]]; then
	commit="$commit + uncommitted changes"
fi

echo "== build"
# The repackaged jar of an application is not rebuilt when only a module it depends on changed: start from none.
rm -f "$app_jar" "$app_jar.original" "$reactive_jar" "$reactive_jar.original"
./mvnw -B -q -pl rate-limit-benchmarks,sample-geocoding-app,reactive-example-app -am package -DskipTests

if [[ " $scenarios " == *" app-integration "* ]] && [[ ! -f $before_dir/${app_jar#"$root/"} \
	|| ! -f $before_dir/${reactive_jar#"$root/"} \
	|| ! -f $before_dir/rate-limit-core/target/rate-limit-core-0.1.0-SNAPSHOT.jar ]]; then
	echo "== build of $before_commit (before issue 32), for app-integration"
	rm -rf "$before_dir"
	mkdir -p "$before_dir"
	git archive "$before_commit" | tar -x -C "$before_dir"
	(cd "$before_dir" && ./mvnw -B -q -pl sample-geocoding-app,reactive-example-app -am package -DskipTests)
fi

rm -rf "$results"
mkdir -p "$results"
: >"$results/runs.tsv"

for scenario in $scenarios; do
	echo "== $scenario"
	seconds=$(limit "$scenario")
	load_before=$(cut -d' ' -f1 /proc/loadavg 2>/dev/null || echo "?")
	scenario_started=$(date +%s)
	# In the background, so that Ctrl-C reaches the trap at once; timeout sends SIGTERM (the JVM's shutdown hooks stop
	# what it started), then SIGKILL 60 s later.
	# shellcheck disable=SC2046
	timeout --kill-after=60 "$seconds" java $(jvm_options "$scenario") -cp "$jar" \
		dev.ratelimit.benchmarks.reliability.Campaign "$scenario" "$mode" "$root" &
	child=$!
	status=0
	wait "$child" || status=$?
	child=""
	case $status in
		0) outcome=completed ;;
		124 | 137) outcome="stopped after $seconds s"
			printf 'note\t%s\tdid not complete within %s s: stopped, with what it had measured\n' "$scenario" \
				"$seconds" >>"$results/$scenario.tsv" ;;
		*) outcome="failed (exit $status)" ;;
	esac
	load_after=$(cut -d' ' -f1 /proc/loadavg 2>/dev/null || echo "?")
	printf '%s\t%s\t%s\t%s\t%s\n' "$scenario" "$outcome" "$(( $(date +%s) - scenario_started ))" "$load_before" \
		"$load_after" >>"$results/runs.tsv"
	echo "== $scenario: $outcome in $(( $(date +%s) - scenario_started )) s"
done

echo "== report"
# shellcheck disable=SC2086
java -cp "$jar" dev.ratelimit.benchmarks.reliability.ReliabilityReport $update "$results" "$root/docs/RELIABILITY.md" \
	"$mode" "$commit" "$(( $(date +%s) - started ))" "${RELIABILITY_NOTE:-}"
echo "== wrote docs/RELIABILITY.md in $(( $(date +%s) - started )) s"
