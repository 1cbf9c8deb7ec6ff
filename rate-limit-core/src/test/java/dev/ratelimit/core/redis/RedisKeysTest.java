package dev.ratelimit.core.redis;

import dev.ratelimit.core.KeyedLimit;
import dev.ratelimit.core.Limit;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

/**
 * Tests for {@link RedisKeys}.
 */
class RedisKeysTest {

	private final RedisKeys keys = new RedisKeys("rl");

	@Test
	void namesAKeyByPrefixPolicyHashedClientNameAndLayout() {
		String key = this.keys.key(new KeyedLimit("geocode-burst", "demo-free", Limit.tokenBucket("5/1s", 10)));
		assertThat(key).matches("rl:\\{geocode-burst:[A-Za-z0-9_-]{22}\\}:token-bucket:tb");
		assertThat(key).doesNotContain("demo-free");
		// The hash is part of every stored key: it must never change, or every client
		// would start afresh.
		assertThat(key).isEqualTo("rl:{geocode-burst:4fT9uUaDoXyKXZ5txsyifE}:token-bucket:tb");
		assertThat(this.keys.key(new KeyedLimit("geocode-burst", "demo-free", Limit.tokenBucket("5/1s", 10))))
			.isEqualTo(key);
	}

	@Test
	void hashesNamesThatAreNotPlain() {
		String key = this.keys.key(new KeyedLimit("api", "alice", "per minute:{x}", Limit.tokenBucket("1/1s")));
		assertThat(key).matches("rl:\\{api:[A-Za-z0-9_-]{22}\\}:~[A-Za-z0-9_-]{22}:tb");
	}

	@Test
	void keepsBracesNewlinesUnicodeAndHugeClientKeysOutOfTheKey() {
		String huge = "x".repeat(10_000);
		for (String client : new String[] { "{evil}", "a\nb\r\n", "\u00e9\u4e2d\ud83d\ude00", huge, "" }) {
			String key = this.keys.key(new KeyedLimit("api", client, Limit.tokenBucket("1/1s")));
			assertThat(key).hasSizeLessThan(80);
			assertThat(key.chars().filter((c) -> c == '{').count()).isOne();
			assertThat(key.chars().filter((c) -> c == '}').count()).isOne();
			assertThat(key).matches("[\\x21-\\x7e]+");
		}
	}

	@Test
	void hashesPolicyNamesThatAreNotPlain() {
		String key = this.keys.key(new KeyedLimit("we{ir}d policy", "k", Limit.tokenBucket("1/1s")));
		assertThat(key).startsWith("rl:{~").doesNotContain("we{ir}d");
	}

	@Test
	void putsEveryLimitOfOnePolicyAndClientInOneSlot() {
		int slot = RedisKeys.slot(this.keys.key(new KeyedLimit("api", "alice", Limit.tokenBucket("1/1s"))));
		assertThat(RedisKeys.slot(this.keys.key(new KeyedLimit("api", "alice", Limit.fixedWindow("100/1h")))))
			.isEqualTo(slot);
		assertThat(RedisKeys.slot(this.keys.key(new KeyedLimit("api", "alice", Limit.concurrency(3))))).isEqualTo(slot);
	}

	@Test
	void keepsTheKeyOfALimitWhoseParametersChangeButNotOfOneWhoseAlgorithmDoes() {
		String free = this.keys.key(new KeyedLimit("api", "alice", Limit.tokenBucket("60/1m")));
		String paid = this.keys.key(new KeyedLimit("api", "alice", Limit.tokenBucket("1000/1m")));
		assertThat(free).isEqualTo(paid);
		String window = this.keys.key(new KeyedLimit("api", "alice", "token-bucket", Limit.fixedWindow("60/1m")));
		assertThat(window).isNotEqualTo(free);
		String second = this.keys.key(new KeyedLimit("api", "alice", "token-bucket-2", Limit.tokenBucket("60/1m")));
		assertThat(second).isNotEqualTo(free);
	}

	@Test
	void rejectsPrefixesThatWouldBreakTheHashTag() {
		assertThatIllegalArgumentException().isThrownBy(() -> RedisKeys.checkPrefix("a{b"))
			.withMessageContaining("a{b");
		assertThatIllegalArgumentException().isThrownBy(() -> RedisKeys.checkPrefix("a b"));
		assertThatIllegalArgumentException().isThrownBy(() -> RedisKeys.checkPrefix(""));
		assertThat(RedisKeys.checkPrefix("myapp:rl")).isEqualTo("myapp:rl");
	}

}
