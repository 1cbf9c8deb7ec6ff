package dev.ratelimit.core.memory;

import java.lang.ref.WeakReference;
import java.time.Duration;
import java.util.List;

import dev.ratelimit.core.Algorithm;
import dev.ratelimit.core.Decision;
import dev.ratelimit.core.KeyedLimit;
import dev.ratelimit.core.Limit;
import dev.ratelimit.core.ManualTimeSource;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What a hostile client's keys cost: a rejected call leaves no key behind, and a long key
 * is held as a fixed-size digest, the same one for every operation.
 */
class KeyCostTest {

	private final ManualTimeSource clock = new ManualTimeSource();

	private final InMemoryRateLimiter limiter = InMemoryRateLimiter.builder().timeSource(this.clock).build();

	private final KeyedLimit global = new KeyedLimit("backend", "global", Limit.fixedWindow("1/1d"));

	@Test
	void aRejectedCallWithSeveralLimitsLeavesNoNewKeyBehind() {
		assertThat(this.limiter.acquire(this.global).isAllowed()).isTrue();
		for (int i = 0; i < 100; i++) {
			KeyedLimit own = new KeyedLimit("api", "client-" + i, Limit.tokenBucket("10/1s"));
			KeyedLimit window = new KeyedLimit("daily", "client-" + i, Limit.slidingWindowLog("100/1d"));
			assertThat(this.limiter.acquire(List.of(own, window, this.global), 1).isAllowed()).isFalse();
		}
		assertThat(this.limiter.keyCount()).isEqualTo(1);
	}

	@Test
	void aRejectedCallLeavesNoNewKeyBehindWhenItsClockMovedOnWhileItDecided() {
		Runnable[] onNextRead = new Runnable[1];
		InMemoryRateLimiter limiter = InMemoryRateLimiter.builder().timeSource(() -> {
			Runnable hook = onNextRead[0];
			onNextRead[0] = null;
			if (hook != null) {
				hook.run();
			}
			return this.clock.nowMicros();
		}).build();
		KeyedLimit daily = new KeyedLimit("backend", "global", Limit.tokenBucket("1/1d"));
		assertThat(limiter.acquire(daily).isAllowed()).isTrue();
		// The call reads the time to make the new key's fresh slot, then again to decide:
		// in between, the clock moves
		// on by far more than half the key's retention (1 s). The call must not show that
		// slot to Caffeine as a key in
		// use, which would add it.
		onNextRead[0] = () -> onNextRead[0] = () -> this.clock.advance(Duration.ofHours(1));
		KeyedLimit own = new KeyedLimit("api", "client", Limit.tokenBucket("10/1s"));
		assertThat(limiter.acquire(List.of(own, daily), 1).isAllowed()).isFalse();
		assertThat(onNextRead[0]).as("the clock moved inside the call").isNull();
		assertThat(limiter.keyCount()).isEqualTo(1);
	}

	@Test
	void aNewKeyNamedTwiceInOneCallIsAddedOnceAndChargedOnce() {
		KeyedLimit own = new KeyedLimit("api", "client", Limit.tokenBucket("10/1d"));
		assertThat(this.limiter.acquire(List.of(own, new KeyedLimit("api", "client", Limit.tokenBucket("10/1d"))), 2)
			.isAllowed()).isTrue();
		assertThat(this.limiter.keyCount()).isEqualTo(1);
		assertThat(remaining(own)).isEqualTo(8);
	}

	@Test
	void aFirstCallThatCanNeverPassLeavesNoKeyBehind() {
		for (Limit limit : List.of(Limit.tokenBucket("10/1s"), Limit.fixedWindow("10/1s"), Limit.concurrency(10),
				Limit.slidingWindowLog("10/1s"), Limit.slidingWindowCounter("10/1s"), Limit.leakyBucket("10/1s"))) {
			assertThat(this.limiter.acquire(new KeyedLimit("api", "new", limit), 11).isAllowed()).isFalse();
		}
		assertThat(this.limiter.tryAcquire(new KeyedLimit("api", "new", Limit.tokenBucket("10/1s")), 11)).isFalse();
		assertThat(this.limiter.tryAcquire(new KeyedLimit("api", "new", Limit.fixedWindow("10/1s")), 11)).isFalse();
		assertThat(this.limiter.keyCount()).isZero();
	}

	@Test
	void aRejectedFirstCallStillStartsTheRefillOfABucketThatStartsBelowCapacity() {
		// As Redis does ("first sight"): the bucket's refill starts at the first call
		// that decided on it.
		KeyedLimit own = new KeyedLimit("api", "client",
				Limit.builder(Algorithm.TOKEN_BUCKET).rate("1/1s").capacity(5).initial(0).build());
		assertThat(this.limiter.acquire(this.global).isAllowed()).isTrue();
		assertThat(this.limiter.acquire(List.of(own, this.global), 1).isAllowed()).isFalse();
		assertThat(this.limiter.keyCount()).isEqualTo(2);
		this.clock.advance(Duration.ofSeconds(3));
		assertThat(this.limiter.acquire(own, 3).isAllowed()).isTrue();
		assertThat(this.limiter.acquire(own).isAllowed()).isFalse();
	}

	@Test
	void anAllowedCallThatTakesNothingFromANewKeyLeavesNoKeyBehind() {
		assertThat(this.limiter.acquire(new KeyedLimit("api", "client", Limit.tokenBucket("10/1s")), 0).isAllowed())
			.isTrue();
		assertThat(this.limiter.acquire(List.of(new KeyedLimit("api", "client", Limit.fixedWindow("10/1s")),
				new KeyedLimit("api", "client", Limit.concurrency(2))), 0)
			.isAllowed()).isTrue();
		assertThat(this.limiter.keyCount()).isZero();
	}

	@Test
	void aLongKeyIsNotKeptByTheLimiter() {
		WeakReference<String> first = new WeakReference<>(longKey('a'));
		this.limiter.acquire(new KeyedLimit("api", first.get(), Limit.tokenBucket("10/1d")));
		// the limiter holds the last key it created beside its store: another one takes
		// its place
		this.limiter.acquire(new KeyedLimit("api", longKey('b'), Limit.tokenBucket("10/1d")));
		for (int i = 0; i < 20 && first.get() != null; i++) {
			System.gc();
		}
		assertThat(first.get()).as("the first 8 KB key").isNull();
		assertThat(this.limiter.keyCount()).isEqualTo(2);
		assertThat(remaining(new KeyedLimit("api", longKey('a'), Limit.tokenBucket("10/1d")))).isEqualTo(9);
	}

	@Test
	void aLongKeyIsFoundByEveryOperationFromAnotherInstanceOfTheSameText() {
		Limit limit = Limit.tokenBucket("10/1d");
		assertThat(this.limiter.acquire(new KeyedLimit("api", longKey('a'), limit), 10).isAllowed()).isTrue();
		assertThat(this.limiter.acquire(new KeyedLimit("api", longKey('a'), limit)).isAllowed()).isFalse();
		assertThat(this.limiter.tryAcquire(new KeyedLimit("api", longKey('a'), limit), 1)).isFalse();
		assertThat(remaining(new KeyedLimit("api", longKey('a'), limit))).isZero();
		this.limiter.reset(new KeyedLimit("api", longKey('a'), limit));
		assertThat(remaining(new KeyedLimit("api", longKey('a'), limit))).isEqualTo(10);
		KeyedLimit uploads = new KeyedLimit("uploads", longKey('a'), Limit.concurrency(1));
		Decision held = this.limiter.acquire(uploads);
		assertThat(this.limiter.acquire(new KeyedLimit("uploads", longKey('a'), Limit.concurrency(1))).isAllowed())
			.isFalse();
		this.limiter.release(held);
		assertThat(remaining(new KeyedLimit("uploads", longKey('a'), Limit.concurrency(1)))).isEqualTo(1);
	}

	@Test
	void longKeysKeepApartStateByEveryCharacterPolicyNameAndAlgorithm() {
		Limit limit = Limit.tokenBucket("10/1d");
		String base = "k".repeat(HashedKey.MAX_PLAIN_CHARS);
		this.limiter.acquire(new KeyedLimit("api", base + "\uD800", limit), 10);
		assertThat(remaining(new KeyedLimit("api", base + "\uD801", limit))).as("another unpaired surrogate")
			.isEqualTo(10);
		assertThat(remaining(new KeyedLimit("api", base + "\uD800", limit))).isZero();
		assertThat(remaining(new KeyedLimit("search", base + "\uD800", limit))).as("another policy").isEqualTo(10);
		assertThat(remaining(new KeyedLimit("api", base + "\uD800", "other", limit))).as("another name").isEqualTo(10);
		assertThat(remaining(new KeyedLimit("api", base + "\uD800", "token-bucket", Limit.fixedWindow("10/1d"))))
			.as("another algorithm")
			.isEqualTo(10);
		assertThat(remaining(new KeyedLimit("api", base + "\uD800", Limit.tokenBucket("11/1d"))))
			.as("other parameters: what was spent stays spent")
			.isEqualTo(1);
		this.limiter.acquire(new KeyedLimit("api", base, limit), 10);
		assertThat(remaining(new KeyedLimit("api", base + "\u0000", limit))).as("one character longer").isEqualTo(10);
	}

	@Test
	void clientKeysThatUtf8WouldConfuseAreTwoClients() {
		// UTF-8 replaces an unpaired surrogate with '?'; keys up to MAX_PLAIN_CHARS are
		// held as they are, longer ones as their digest
		String plain = "k".repeat(HashedKey.MAX_PLAIN_CHARS - 1);
		String hashed = "k".repeat(HashedKey.MAX_PLAIN_CHARS);
		String[][] pairs = { { "bob\uD800", "bob?" }, { "\uDC00", "?" }, { plain + "\uD800", plain + "?" },
				{ hashed + "\uD800", hashed + "?" }, { "\uDC00" + hashed, "?" + hashed } };
		Limit limit = Limit.fixedWindow("1/1h");
		for (String[] pair : pairs) {
			KeyedLimit surrogate = new KeyedLimit("api", pair[0], limit);
			KeyedLimit question = new KeyedLimit("api", pair[1], limit);
			assertThat(this.limiter.acquire(surrogate).isAllowed()).isTrue();
			assertThat(this.limiter.acquire(question).isAllowed()).as("%d characters", pair[1].length()).isTrue();
			assertThat(this.limiter.acquire(surrogate).isAllowed()).isFalse();
			assertThat(this.limiter.acquire(question).isAllowed()).isFalse();
		}
	}

	@Test
	void anApiKeyResolversKeyIsHeldAsItIsAndALongerKeyAsItsDigest() {
		// the API-key resolver's keys: "key:" and the 64 hex digits of a SHA-256
		String apiKey = "key:" + "0123456789abcdef".repeat(4);
		Limit limit = Limit.tokenBucket("10/1d");
		assertThat(StateKey.of(new KeyedLimit("api", apiKey, limit))).isInstanceOf(StateKey.class);
		assertThat(StateKey.of(new KeyedLimit("api", "k".repeat(HashedKey.MAX_PLAIN_CHARS + 1), limit)))
			.isInstanceOf(HashedKey.class);
	}

	private static String longKey(char fill) {
		return String.valueOf(fill).repeat(8192);
	}

	private long remaining(KeyedLimit key) {
		return this.limiter.inspect(List.of(key)).get(0).remaining();
	}

}
