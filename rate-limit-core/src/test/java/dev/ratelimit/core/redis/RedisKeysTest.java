package dev.ratelimit.core.redis;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;

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

	@Test
	void givesClientKeysThatUtf8WouldConfuseKeysOfTheirOwn() {
		// UTF-8 replaces an unpaired surrogate with '?'
		String[][] pairs = { { "bob\uD800", "bob?" }, { "\uDC00", "?" }, { "\uDC00\uD800", "??" },
				{ "\uD800\uD800\uDC00", "?\uD800\uDC00" }, { "k".repeat(71) + "\uD800", "k".repeat(71) + "?" },
				{ "k".repeat(72) + "\uDFFF", "k".repeat(72) + "?" } };
		for (String[] pair : pairs) {
			Limit limit = Limit.fixedWindow("1/1h");
			assertThat(this.keys.key(new KeyedLimit("api", pair[0], limit)))
				.isNotEqualTo(this.keys.key(new KeyedLimit("api", pair[1], limit)));
			assertThat(this.keys.penaltyKey(new KeyedLimit("api", pair[0], limit)))
				.isNotEqualTo(this.keys.penaltyKey(new KeyedLimit("api", pair[1], limit)));
		}
	}

	@Test
	void givesPolicyAndLimitNamesThatUtf8WouldConfuseKeysOfTheirOwn() {
		Limit limit = Limit.tokenBucket("1/1s");
		assertThat(this.keys.key(new KeyedLimit("api\uD800", "alice", limit)))
			.isNotEqualTo(this.keys.key(new KeyedLimit("api?", "alice", limit)));
		// 64 characters: the longest name kept readable, were it plain
		String name = "n".repeat(63);
		assertThat(this.keys.key(new KeyedLimit("api", "alice", name + "\uDC00", limit)))
			.isNotEqualTo(this.keys.key(new KeyedLimit("api", "alice", name + "?", limit)));
		assertThat(this.keys.key(new KeyedLimit("api", "alice", name + "n\uDC00", limit)))
			.isNotEqualTo(this.keys.key(new KeyedLimit("api", "alice", name + "n?", limit)));
	}

	@Test
	void hashesEveryShortStringOfSurrogatesAndTheirLookAlikesApart() {
		char[] alphabet = { 'a', '?', '\uFFFD', '\u00e9', '\uD800', '\uDBFF', '\uDC00', '\uDFFF' };
		List<String> texts = new ArrayList<>(List.of(""));
		for (int length = 1; length <= 3; length++) {
			List<String> longer = new ArrayList<>();
			for (String text : texts) {
				if (text.length() == length - 1) {
					for (char c : alphabet) {
						longer.add(text + c);
					}
				}
			}
			texts.addAll(longer);
		}
		Map<String, String> byHash = new HashMap<>();
		for (String text : texts) {
			String other = byHash.put(RedisKeys.hash(text), text);
			assertThat(other).as("%s and %s share a hash", escaped(text), (other != null) ? escaped(other) : "")
				.isNull();
		}
		assertThat(byHash).hasSize(1 + 8 + 64 + 512);
	}

	@Test
	void hashesWellFormedTextOverItsUtf8AsBefore() throws Exception {
		// stored keys: a changed hash would start every client afresh
		assertThat(RedisKeys.hash("\u00e9\u4e2d\ud83d\ude00")).isEqualTo("qrrjQY_2NGMD0nxxDseJ52");
		assertThat(RedisKeys.hash("bob?")).isEqualTo("77E2tu3DA6zH3DHT_y_nxq");
		Random random = new Random(32);
		for (int i = 0; i < 2000; i++) {
			StringBuilder text = new StringBuilder();
			for (int length = random.nextInt(12); length > 0; length--) {
				int codePoint;
				do {
					codePoint = switch (random.nextInt(4)) {
						case 0 -> random.nextInt(0x80);
						case 1 -> random.nextInt(0x800);
						case 2 -> random.nextInt(0x10000);
						default -> 0x10000 + random.nextInt(0x100000);
					};
				}
				while (codePoint >= 0xD800 && codePoint <= 0xDFFF);
				text.appendCodePoint(codePoint);
			}
			byte[] digest = MessageDigest.getInstance("SHA-256")
				.digest(text.toString().getBytes(StandardCharsets.UTF_8));
			assertThat(RedisKeys.hash(text.toString()))
				.isEqualTo(Base64.getUrlEncoder().withoutPadding().encodeToString(digest).substring(0, 22));
		}
	}

	private static String escaped(String text) {
		StringBuilder escaped = new StringBuilder();
		text.chars().forEach((c) -> escaped.append(String.format("\\u%04X", c)));
		return escaped.toString();
	}

}
