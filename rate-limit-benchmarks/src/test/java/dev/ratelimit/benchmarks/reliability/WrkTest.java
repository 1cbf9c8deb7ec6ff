package dev.ratelimit.benchmarks.reliability;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

/**
 * wrk's report, with the status line of the campaign's Lua script, read into figures.
 */
class WrkTest {

	private static final String REPORT = """
			Running 5s test @ http://127.0.0.1:23457/api/reverse?lat=34&lon=-6
			  2 threads and 128 connections
			  Thread Stats   Avg      Stdev     Max   +/- Stdev
			    Latency     1.04s   531.35ms   1.99s    58.86%
			    Req/Sec    40.27     25.24   109.00     70.67%
			  Latency Distribution
			     50%    1.02s
			     75%    1.50s
			     90%    1.79s
			     99%  812.00us
			  387 requests in 5.09s, 196.15KB read
			  Socket errors: connect 1, read 2, write 3, timeout 54
			  Non-2xx or 3xx responses: 300
			Requests/sec:     76.00
			Transfer/sec:     38.52KB
			statuses 200=87 429=250 503-planned=40 503=7 500=3
			""";

	@Test
	void readsCountsLatenciesSocketErrorsAndStatuses() {
		Wrk.Result result = Wrk.parse(REPORT);
		assertThat(result.requests()).isEqualTo(387);
		assertThat(result.seconds()).isCloseTo(5.09, within(1e-9));
		assertThat(result.requestsPerSecond()).isEqualTo(76.0);
		assertThat(result.p99Millis()).isCloseTo(0.812, within(1e-9));
		assertThat(result.maxMillis()).isCloseTo(1990, within(1e-9));
		assertThat(result.socketErrors()).isEqualTo(60);
		assertThat(result.statuses()).containsEntry("429", 250L).containsEntry("503-planned", 40L);
	}

	@Test
	void countsEvery5xxButTheDenyModesPlanned503AsUnplanned() {
		assertThat(Wrk.parse(REPORT).unplanned5xx()).isEqualTo(10);
	}

	@Test
	void readsAReportWithoutSocketErrorsOrStatusLine() {
		Wrk.Result result = Wrk.parse("""
				  Thread Stats   Avg      Stdev     Max   +/- Stdev
				    Latency   250.00us  100.00us   1.50m    90.00%
				  1000 requests in 1.00m, 1.00MB read
				Requests/sec:     16.67
				""");
		assertThat(result.socketErrors()).isZero();
		assertThat(result.unplanned5xx()).isZero();
		assertThat(result.maxMillis()).isEqualTo(90_000);
		assertThat(result.seconds()).isEqualTo(60);
		assertThat(result.p99Millis()).isNaN();
	}

}
