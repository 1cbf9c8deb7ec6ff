package dev.ratelimit.spring.actuate;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import org.assertj.core.api.InstanceOfAssertFactories;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.boot.actuate.endpoint.web.WebEndpointResponse;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.Status;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.mock.web.MockHttpServletRequest;

import dev.ratelimit.core.Decision;
import dev.ratelimit.core.redis.RedisRateLimiter;
import dev.ratelimit.core.redis.testing.RedisEndpoint;
import dev.ratelimit.core.redis.testing.RedisServer;
import dev.ratelimit.core.redis.testing.RespClient;
import dev.ratelimit.core.redis.testing.TestRedis;
import dev.ratelimit.spring.RateLimitContext;
import dev.ratelimit.spring.RateLimitService;
import dev.ratelimit.spring.autoconfigure.RateLimitAutoConfiguration;
import dev.ratelimit.spring.autoconfigure.RateLimitEndpointAutoConfiguration;
import dev.ratelimit.spring.autoconfigure.RateLimitHealthAutoConfiguration;
import dev.ratelimit.spring.autoconfigure.RateLimitRedisAutoConfiguration;
import dev.ratelimit.spring.web.ServletRateLimitRequest;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The health contributor and the endpoint on the Redis backend, against real
 * {@code redis-server} processes. The timeout is generous: a first call connects, and a
 * busy machine must not turn that into a backend failure.
 */
@ExtendWith(OutputCaptureExtension.class)
class RedisBackendActuatorTests {

	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class,
				RateLimitRedisAutoConfiguration.class, RateLimitAutoConfiguration.class,
				RateLimitHealthAutoConfiguration.class, RateLimitEndpointAutoConfiguration.class))
		.withPropertyValues("ratelimit.backend=redis", "ratelimit.redis.key-prefix=" + TestRedis.uniquePrefix(),
				"ratelimit.redis.timeout=2s", "ratelimit.policies.burst.key=api-key",
				"ratelimit.policies.burst.limits[0].rate=10/1h", "ratelimit.policies.wide.key=api-key",
				"ratelimit.policies.wide.limits[0].rate=100000/1s",
				"management.endpoints.web.exposure.include=ratelimits");

	@Test
	void healthIsDownWhileRedisIsStoppedSayingWhichFailureModeDecidesAndUpWhenItIsBack() {
		try (RedisServer server = RedisServer.start()) {
			this.runner.withPropertyValues(redis(server.endpoint()))
				.withPropertyValues("ratelimit.redis.timeout=500ms", "ratelimit.on-backend-failure=deny")
				.run((context) -> {
					assertThat(context).hasSingleBean(RedisRateLimiter.class);
					RateLimitHealthIndicator indicator = context.getBean(RateLimitHealthIndicator.class);
					Health up = awaitStatus(indicator, Status.UP);
					assertThat(up.getDetails()).containsEntry("backend", "redis").containsEntry("failureMode", "deny");

					server.stop();
					Health down = awaitStatus(indicator, Status.DOWN);
					assertThat(down.getDetails()).containsEntry("backend", "redis")
						.containsEntry("failureMode", "deny")
						.containsKey("error");
					assertThat(down.getDetails().get("whileDown").toString()).contains("rejected (503)");

					server.restart();
					Health back = awaitStatus(indicator, Status.UP);
					assertThat(back.getDetails()).containsEntry("failureMode", "deny").doesNotContainKey("error");
				});
		}
	}

	@Test
	void healthNamesTheFailureButNotRedisAddressWhichGoesToTheLog(CapturedOutput output) throws IOException {
		int port = unusedPort();
		this.runner.withPropertyValues("spring.data.redis.host=127.0.0.1", "spring.data.redis.port=" + port)
			.withPropertyValues("ratelimit.redis.timeout=2s")
			.run((context) -> {
				Health down = awaitStatus(context.getBean(RateLimitHealthIndicator.class), Status.DOWN);
				assertThat(down.getDetails()).hasEntrySatisfying("error",
						(error) -> assertThat(error.toString()).matches("[\\w.$]+Exception"));
				assertThat(down.getDetails().get("message").toString()).contains("the application's log");
				assertThat(down.getDetails().toString()).doesNotContain(Integer.toString(port))
					.doesNotContain("127.0.0.1");
				assertThat(output.getOut()).contains("Rate-limit health check failed")
					.contains("127.0.0.1")
					.contains(Integer.toString(port));
			});
	}

	/**
	 * A port on which nothing listens, so that connecting is refused at once, with a
	 * message naming the address.
	 */
	private static int unusedPort() throws IOException {
		try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
			return socket.getLocalPort();
		}
	}

	@Test
	void healthSaysThatCallsAreAllowedWhileRedisIsDownInTheAllowMode() {
		try (RedisServer server = RedisServer.start()) {
			this.runner.withPropertyValues(redis(server.endpoint()))
				.withPropertyValues("ratelimit.redis.timeout=500ms")
				.run((context) -> {
					RateLimitHealthIndicator indicator = context.getBean(RateLimitHealthIndicator.class);
					awaitStatus(indicator, Status.UP);
					server.stop();
					Health down = awaitStatus(indicator, Status.DOWN);
					assertThat(down.getDetails()).containsEntry("failureMode", "allow");
					assertThat(down.getDetails().get("whileDown").toString()).contains("allowed");
				});
		}
	}

	@Test
	void healthSaysThatCallsAreLimitedLocallyWhileRedisAnswersLateEvenInTheAllowMode() {
		try (RedisServer server = RedisServer.start(); RespClient admin = server.endpoint().client()) {
			this.runner.withPropertyValues(redis(server.endpoint()))
				.withPropertyValues("ratelimit.redis.timeout=200ms")
				.run((context) -> {
					RateLimitHealthIndicator indicator = context.getBean(RateLimitHealthIndicator.class);
					awaitStatus(indicator, Status.UP);
					// Redis holds the check's write past the timeout: late, not gone
					admin.command("CLIENT", "PAUSE", "2000", "WRITE");
					Health late = indicator.health();
					assertThat(late.getStatus()).isEqualTo(Status.DOWN);
					assertThat(late.getDetails()).containsEntry("failureMode", "allow");
					assertThat(late.getDetails().get("whileDown").toString()).contains("answers late")
						.contains("in-memory limits")
						.doesNotContain("allowed");
					admin.command("CLIENT", "UNPAUSE");
					awaitStatus(indicator, Status.UP);
				});
		}
	}

	@Test
	void pollingHealthHardWhileRedisAnswersLateBringsNoCallBackToRedisBeforeTheLimitersProbe() {
		try (RedisServer server = RedisServer.start(); RespClient admin = server.endpoint().client()) {
			this.runner.withPropertyValues(redis(server.endpoint()))
				.withPropertyValues("ratelimit.redis.timeout=200ms")
				.run((context) -> {
					RateLimitHealthIndicator indicator = context.getBean(RateLimitHealthIndicator.class);
					RateLimitService service = context.getBean(RateLimitService.class);
					awaitStatus(indicator, Status.UP);
					assertThat(decide(service).source()).isEqualTo(Decision.Source.BACKEND);
					// Redis holds writes for 500 ms: the call is answered late, and the
					// one-second cool-down starts at its timeout
					admin.command("CLIENT", "PAUSE", "500", "WRITE");
					long lateAt = System.nanoTime();
					assertThat(decide(service).source()).isEqualTo(Decision.Source.LOCAL_FALLBACK);
					// polled hard until before the cool-down can have ended; from 500 ms
					// on
					// every check writes in time
					List<Decision.Source> cooling = new ArrayList<>();
					int checks = 0;
					while (System.nanoTime() - lateAt < Duration.ofMillis(1000).toNanos()) {
						indicator.health();
						checks++;
						cooling.add(decide(service).source());
					}
					assertThat(checks).isGreaterThan(10);
					assertThat(cooling).containsOnly(Decision.Source.LOCAL_FALLBACK);
					await().atMost(Duration.ofSeconds(5))
						.pollInterval(Duration.ofMillis(20))
						.until(() -> decide(service).source() == Decision.Source.BACKEND);
				});
		}
	}

	private static Decision decide(RateLimitService service) {
		MockHttpServletRequest request = new MockHttpServletRequest();
		request.addHeader("X-API-Key", "polled-client");
		return service
			.decide(List.of("wide"), 1, RateLimitContext.forRequest(new ServletRateLimitRequest(request), null))
			.decision();
	}

	@Test
	void answersAKeyReadAndResetWith503WhileRedisIsStopped() {
		try (RedisServer server = RedisServer.start()) {
			this.runner.withPropertyValues(redis(server.endpoint()))
				.withPropertyValues("ratelimit.redis.timeout=500ms")
				.run((context) -> {
					RateLimitsEndpointWebExtension web = context.getBean(RateLimitsEndpointWebExtension.class);
					assertThat(web.key("burst", "stopped-client", null).getStatus()).isEqualTo(200);
					server.stop();
					awaitStatus(context.getBean(RateLimitHealthIndicator.class), Status.DOWN);
					WebEndpointResponse<Object> read = web.key("burst", "stopped-client", null);
					assertThat(read.getStatus()).isEqualTo(503);
					assertThat(read.getBody()).asInstanceOf(InstanceOfAssertFactories.MAP)
						.containsEntry("policy", "burst")
						.hasEntrySatisfying("message", (message) -> assertThat(message.toString())
							.startsWith("Could not read rate-limit state: the backend"));
					WebEndpointResponse<Object> reset = web.reset("burst", "stopped-client");
					assertThat(reset.getStatus()).isEqualTo(503);
					assertThat(reset.getBody()).asInstanceOf(InstanceOfAssertFactories.MAP)
						.hasEntrySatisfying("message", (message) -> assertThat(message.toString())
							.startsWith("Could not reset rate-limit state: the backend"));
				});
		}
	}

	@Test
	void readsAClientsStateInRedisWithoutConsumingAndResetsIt() {
		this.runner.withPropertyValues(redis(TestRedis.standalone())).run((context) -> {
			RateLimitService service = context.getBean(RateLimitService.class);
			RateLimitsEndpoint endpoint = context.getBean(RateLimitsEndpoint.class);
			MockHttpServletRequest request = new MockHttpServletRequest();
			request.addHeader("X-API-Key", "redis-client");
			for (int i = 0; i < 3; i++) {
				assertThat(service
					.decide(List.of("burst"), 1,
							RateLimitContext.forRequest(new ServletRateLimitRequest(request), null))
					.decision())
					.satisfies((decision) -> assertThat(decision.source()).isEqualTo(Decision.Source.BACKEND))
					.satisfies((decision) -> assertThat(decision.isAllowed()).isTrue());
			}
			for (int read = 0; read < 3; read++) {
				KeyStateDescriptor state = endpoint.key("burst", "redis-client", null);
				assertThat(state).isNotNull();
				assertThat(state.limits()).singleElement().satisfies((limit) -> {
					assertThat(limit.algorithm()).isEqualTo("token-bucket");
					assertThat(limit.limit()).isEqualTo(10);
					assertThat(limit.remaining()).isEqualTo(7);
					assertThat(limit.resetSeconds()).isBetween(1079L, 1080L);
				});
			}
			endpoint.reset("burst", "redis-client");
			assertThat(endpoint.key("burst", "redis-client", null).limits().get(0).remaining()).isEqualTo(10);
			assertThat(service
				.decide(List.of("burst"), 1, RateLimitContext.forRequest(new ServletRateLimitRequest(request), null))
				.decision()
				.remaining()).isEqualTo(9);
		});
	}

	/**
	 * Polls the indicator, which pings Redis, until it reports a status: a real server
	 * takes its time to die and to come back, and the client reconnects with a back-off.
	 */
	private static Health awaitStatus(RateLimitHealthIndicator indicator, Status status) {
		return await().atMost(Duration.ofSeconds(30))
			.pollInterval(Duration.ofMillis(50))
			.until(indicator::health, (health) -> health.getStatus().equals(status));
	}

	private static String[] redis(RedisEndpoint endpoint) {
		return (endpoint.password() != null) ? new String[] { "spring.data.redis.host=" + endpoint.host(),
				"spring.data.redis.port=" + endpoint.port(), "spring.data.redis.database=" + endpoint.database(),
				"spring.data.redis.password=" + endpoint.password() }
				: new String[] { "spring.data.redis.host=" + endpoint.host(),
						"spring.data.redis.port=" + endpoint.port(),
						"spring.data.redis.database=" + endpoint.database() };
	}

}
