package dev.ratelimit.benchmarks.reliability;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What the campaign reads from Redis ({@code INFO commandstats}) and from
 * {@code jcmd GC.heap_info}, and the percentiles it takes.
 */
class ReadingsTest {

	@Test
	void countsTheDecisionScriptsCallsExecutedFailedOrRejected() {
		String stats = """
				# Commandstats\r
				cmdstat_script|load:calls=1,usec=2644,usec_per_call=2644.00,rejected_calls=0,failed_calls=0\r
				cmdstat_fcall:calls=7,usec=1010,usec_per_call=144.29,rejected_calls=2,failed_calls=1\r
				cmdstat_evalsha:calls=3,usec=10,usec_per_call=3.33,rejected_calls=0,failed_calls=3\r
				cmdstat_function|load:calls=1,usec=792,usec_per_call=792.00,rejected_calls=0,failed_calls=0\r
				cmdstat_info:calls=40,usec=400,usec_per_call=10.00,rejected_calls=0,failed_calls=0\r
				""";
		assertThat(RedisStats.scriptCalls(stats)).isEqualTo(12);
		assertThat(RedisStats.scriptCalls("# Commandstats\r\n")).isZero();
	}

	@Test
	void readsTheHeapInUseFromGcHeapInfo() {
		String heapInfo = """
				12345:
				 garbage-first heap   total 524288K, used 38921K [0x00000000e0000000, 0x0000000100000000)
				  region size 1024K, 3 young (3072K), 0 survivors (0K)
				 Metaspace       used 61234K, committed 61888K, reserved 1114112K
				""";
		assertThat(JvmReadings.heapUsed(heapInfo)).isEqualTo(38921L * 1024);
	}

	@Test
	void takesPercentilesByNearestRank() {
		Percentiles percentiles = Percentiles.of(new double[] { 5, 1, 4, 2, 3, 6, 7, 8, 9, 10 });
		assertThat(percentiles.at(99)).isEqualTo(10);
		assertThat(percentiles.at(90)).isEqualTo(9);
		assertThat(percentiles.median()).isEqualTo(5);
		assertThat(percentiles.max()).isEqualTo(10);
		assertThat(Percentiles.of(new double[0]).at(99)).isNaN();
	}

}
