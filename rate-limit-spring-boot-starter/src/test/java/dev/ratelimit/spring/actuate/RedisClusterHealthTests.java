package dev.ratelimit.spring.actuate;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.function.Predicate;

import org.assertj.core.api.InstanceOfAssertFactories;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.Status;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import dev.ratelimit.core.docs.DocExamples;
import dev.ratelimit.core.redis.testing.RedisCluster;
import dev.ratelimit.core.redis.testing.RedisServer;
import dev.ratelimit.core.redis.testing.RespClient;
import dev.ratelimit.core.redis.testing.TestRedis;
import dev.ratelimit.spring.autoconfigure.RateLimitAutoConfiguration;
import dev.ratelimit.spring.autoconfigure.RateLimitHealthAutoConfiguration;
import dev.ratelimit.spring.autoconfigure.RateLimitRedisAutoConfiguration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The health contributor on a three-master Redis Cluster: {@code UP} while any master
 * decides calls, naming the slots of a master that does not and what its calls get;
 * {@code DOWN} once no master decides calls.
 */
class RedisClusterHealthTests {

	private static final JsonMapper json = JsonMapper.builder().build();

	private static RedisCluster cluster;

	@BeforeAll
	static void startCluster() {
		// the masters that answer keep serving their slots, whatever the cluster makes of
		// a stopped one
		cluster = RedisCluster.start("--cluster-require-full-coverage", "no");
	}

	@AfterAll
	static void stopCluster() {
		cluster.close();
	}

	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withConfiguration(
				AutoConfigurations.of(DataRedisAutoConfiguration.class, RateLimitRedisAutoConfiguration.class,
						RateLimitAutoConfiguration.class, RateLimitHealthAutoConfiguration.class))
		.withPropertyValues("ratelimit.backend=redis", "ratelimit.redis.key-prefix=" + TestRedis.uniquePrefix(),
				"ratelimit.redis.timeout=500ms", "ratelimit.policies.api.key=api-key",
				"ratelimit.policies.api.limits[0].rate=10/1h");

	@Test
	void withOneMasterOfThreeDownHealthIsUpNamingItsSlotsAndDownOnceNoMasterDecides() {
		String nodes = String.join(",", cluster.nodeAddresses());
		this.runner.withPropertyValues("spring.data.redis.cluster.nodes=" + nodes).run((context) -> {
			RateLimitHealthIndicator indicator = context.getBean(RateLimitHealthIndicator.class);
			Health up = awaitHealth(indicator,
					(health) -> Integer.valueOf(3).equals(health.getDetails().get("mastersUp")));
			assertThat(up.getStatus()).isEqualTo(Status.UP);
			assertThat(up.getDetails()).containsEntry("masters", 3)
				.containsEntry("slotsUp", 16384)
				.doesNotContainKeys("unavailableMasters", "error");

			List<RedisServer> masters = cluster.nodes();
			String killedId = nodeId(masters.get(0));
			masters.get(0).stop();
			Health partial = awaitHealth(indicator,
					(health) -> Integer.valueOf(2).equals(health.getDetails().get("mastersUp")));
			assertThat(partial.getStatus()).as("two masters of three decide calls").isEqualTo(Status.UP);
			// as the docs show it, but for the node's id
			String shown = DocExamples.block("docs/OBSERVABILITY.md", "health-cluster");
			String actual = json
				.writeValueAsString(Map.of("status", partial.getStatus().getCode(), "details", partial.getDetails()))
				.replace(killedId, json.readTree(shown).at("/details/unavailableMasters/0/node").asString());
			assertThat(json.readTree(actual)).as(actual).isEqualTo(json.readTree(shown));
			assertThat(partial.getDetails().toString()).doesNotContain("127.0.0.1")
				.doesNotContain(Integer.toString(masters.get(0).port()));

			masters.get(1).pause();
			masters.get(2).pause();
			try {
				Health down = awaitHealth(indicator, (health) -> health.getStatus().equals(Status.DOWN));
				assertThat(down.getDetails()).containsEntry("mastersUp", 0).containsEntry("slotsUp", 0);
				assertThat(down.getDetails().get("unavailableMasters"))
					.asInstanceOf(InstanceOfAssertFactories.list(Map.class))
					.extracting((master) -> master.get("state"))
					.containsExactlyInAnyOrder("down", "late", "late");
			}
			finally {
				masters.get(1).resume();
				masters.get(2).resume();
			}
			Health back = awaitHealth(indicator,
					(health) -> Integer.valueOf(2).equals(health.getDetails().get("mastersUp")));
			assertThat(back.getStatus()).isEqualTo(Status.UP);
		});
	}

	private static String nodeId(RedisServer node) {
		try (RespClient client = node.endpoint().client()) {
			return client.text("CLUSTER", "MYID");
		}
	}

	/**
	 * Polls the indicator, which checks every master, until its health matches.
	 */
	private static Health awaitHealth(RateLimitHealthIndicator indicator, Predicate<Health> expected) {
		return await().atMost(Duration.ofSeconds(30))
			.pollInterval(Duration.ofMillis(50))
			.until(indicator::health, expected);
	}

}
