package dev.ratelimit.benchmarks.reliability;

import java.time.Duration;
import java.util.List;

import dev.ratelimit.core.Decision;
import dev.ratelimit.core.KeyedLimit;
import dev.ratelimit.core.Limit;
import dev.ratelimit.core.redis.RedisRateLimiter;
import dev.ratelimit.core.redis.testing.RespClient;

import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

/**
 * Issue 32's findings that live in the core (6 and 8b), measured against a real Redis by
 * a {@link RedisRateLimiter} in a JVM of their own, whose class path puts one version's
 * {@code rate-limit-core} jar first: {@code CoreProbe <redis port> <boundaries>}. Uses
 * only API that the version before issue 32 has too; prints {@code probe <measure>
 * <value>} lines.
 */
public final class CoreProbe {

	private static final long RESERVOIR = 16;

	private static final int WINDOW_LIMIT = 100;

	private CoreProbe() {
	}

	public static void main(String[] args) {
		int port = Integer.parseInt(args[0]);
		int boundaries = Integer.parseInt(args[1]);
		LettuceConnectionFactory factory = new LettuceConnectionFactory(
				new RedisStandaloneConfiguration("127.0.0.1", port));
		factory.afterPropertiesSet();
		factory.start();
		try {
			surrogates(factory, port);
			boundaries(factory, port, boundaries);
		}
		finally {
			factory.destroy();
		}
		System.exit(0);
	}

	/**
	 * Finding 8b: two client keys that UTF-8 writes alike ("bob" and an unpaired
	 * surrogate, "bob?"), each given one permit an hour.
	 */
	private static void surrogates(LettuceConnectionFactory factory, int port) {
		try (RedisRateLimiter limiter = RedisRateLimiter.builder(factory).keyPrefix("probe-surrogates").build()) {
			ready(limiter);
			Limit limit = Limit.fixedWindow("1/1h");
			Decision surrogate = limiter.acquire(new KeyedLimit("api", "bob\uD800", limit));
			Decision question = limiter.acquire(new KeyedLimit("api", "bob?", limit));
			print("surrogate-key-allowed", surrogate.isAllowed() ? 1 : 0);
			print("question-mark-key-allowed", question.isAllowed() ? 1 : 0);
			print("decided-by-redis", ((surrogate.source() == Decision.Source.BACKEND) ? 1 : 0)
					+ ((question.source() == Decision.Source.BACKEND) ? 1 : 0));
		}
		try (RespClient client = new RespClient("127.0.0.1", port, 2000)) {
			Object keys = client.command("KEYS", "probe-surrogates:*");
			print("redis-keys", (keys instanceof List<?> list) ? list.size() : -1);
		}
	}

	/**
	 * Finding 6: one instance in two-tier mode (reservoirs of {@value #RESERVOIR}) on a
	 * fixed window of {@value #WINDOW_LIMIT}/1s. In each window it takes 90 permits
	 * (Redis counts 96, its reservoir holds 6); just before the boundary Redis holds its
	 * writes for 80 ms ({@code CLIENT PAUSE WRITE}), and a call of cost 10 sends a fill
	 * that Redis runs after the boundary; then the instance takes single permits until
	 * one is refused. Prints the most permits it admitted in one window after a boundary.
	 */
	private static void boundaries(LettuceConnectionFactory factory, int port, int boundaries) {
		long most = 0;
		long fewest = Long.MAX_VALUE;
		int measured = 0;
		try (RedisRateLimiter limiter = RedisRateLimiter.builder(factory)
			.keyPrefix("probe-boundaries")
			.timeout(Duration.ofMillis(500))
			.reservoir(RESERVOIR)
			.build(); RespClient admin = new RespClient("127.0.0.1", port, 2000)) {
			ready(limiter);
			for (int boundary = 0; boundary < boundaries; boundary++) {
				KeyedLimit window = new KeyedLimit("api", "window-" + boundary,
						Limit.fixedWindow(WINDOW_LIMIT + "/1s"));
				long next = (System.currentTimeMillis() / 1000 + 1) * 1000;
				sleepUntil(next + 100);
				for (int i = 0; i < 90; i++) {
					limiter.acquire(window);
				}
				long boundaryMillis = next + 1000;
				sleepUntil(boundaryMillis - 30);
				admin.command("CLIENT", "PAUSE", "80", "WRITE");
				sleepUntil(boundaryMillis - 20);
				long admitted = limiter.acquire(window, 10).isAllowed() ? 10 : 0;
				if (System.currentTimeMillis() < boundaryMillis) {
					// decided before the boundary: the pause did not hold the fill
					continue;
				}
				while (limiter.acquire(window).isAllowed() && System.currentTimeMillis() < boundaryMillis + 1000) {
					admitted++;
				}
				measured++;
				most = Math.max(most, admitted);
				fewest = Math.min(fewest, admitted);
			}
		}
		print("boundaries-measured", measured);
		print("most-admitted-in-a-window", most);
		print("fewest-admitted-in-a-window", (fewest == Long.MAX_VALUE) ? 0 : fewest);
	}

	private static void ready(RedisRateLimiter limiter) {
		if (!limiter.awaitReady(Duration.ofSeconds(10))) {
			throw new IllegalStateException("Redis did not take the limiter's first call within 10 s");
		}
	}

	private static void sleepUntil(long epochMillis) {
		long left = epochMillis - System.currentTimeMillis();
		if (left > 0) {
			Pause.millis(left);
		}
	}

	private static void print(String measure, long value) {
		System.out.println("probe " + measure + " " + value);
	}

}
