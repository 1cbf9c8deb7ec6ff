package dev.ratelimit.sample.geocoding.ratelimit;

import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.List;

import dev.ratelimit.core.redis.testing.RedisEndpoint;
import dev.ratelimit.core.redis.testing.TestRedis;
import dev.ratelimit.sample.geocoding.GeocodingApplication;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Two instances of the sample app with the {@code redis} profile on one Redis (the test
 * harness's own server) share one quota: a free-tier caller gets 60 requests in all, not
 * 60 from each.
 */
class TwoInstancesShareQuotaTests {

	private static final List<ConfigurableApplicationContext> instances = new ArrayList<>();

	private static final List<SampleHttp> clients = new ArrayList<>();

	@BeforeAll
	static void startTwoInstances() {
		RedisEndpoint redis = TestRedis.standalone();
		String prefix = TestRedis.uniquePrefix();
		for (int i = 0; i < 2; i++) {
			ConfigurableApplicationContext context = new SpringApplicationBuilder(GeocodingApplication.class)
				.profiles("redis")
				// Command-line arguments, so that they override application.yml.
				.run("--server.port=0", "--spring.data.redis.host=" + redis.host(),
						"--spring.data.redis.port=" + redis.port(), "--ratelimit.redis.key-prefix=" + prefix,
						// Refill a token a minute, not a second, so that the test's own
						// duration adds none.
						"--ratelimit.policies.api.tiers.free[0].rate=60/1h");
			instances.add(context);
			clients.add(new SampleHttp(((WebServerApplicationContext) context).getWebServer().getPort()));
		}
	}

	@AfterAll
	static void stopInstances() {
		instances.forEach(ConfigurableApplicationContext::close);
	}

	@Test
	void sixtyFreeTierRequestsSplitAcrossBothInstancesPassAndTheSixtyFirstIsRejectedWhereverItLands() {
		List<Integer> statuses = new ArrayList<>();
		for (int i = 0; i < 60; i++) {
			statuses.add(clients.get(i % 2).get("/api/reverse?lat=34&lon=-6", "demo-free").statusCode());
		}
		assertThat(statuses).containsOnly(200);
		HttpResponse<String> onFirst = clients.get(0).get("/api/reverse?lat=34&lon=-6", "demo-free");
		HttpResponse<String> onSecond = clients.get(1).get("/api/reverse?lat=34&lon=-6", "demo-free");
		assertThat(onFirst.statusCode()).isEqualTo(429);
		assertThat(onSecond.statusCode()).isEqualTo(429);
		assertThat(onSecond.body()).contains("\"violated-policies\":[\"api\"]");
	}

}
