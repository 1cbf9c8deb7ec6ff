package dev.ratelimit.core.redis;

import java.util.List;

import dev.ratelimit.core.KeyedLimit;
import dev.ratelimit.core.Limit;
import dev.ratelimit.core.LimitStatus;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;

/**
 * Tests for {@link ScriptReply}.
 */
class ScriptReplyTest {

	@Test
	void decodesTheTimeAndEachKeysOutcomeInOrder() {
		ScriptReply reply = ScriptReply
			.decode(List.of(1_000L, 0L, 1L, 4L, 0L, 600L, 250L, 0L, 900L, 0L, 0L, 0L, 30L, 80L, 0L, 1L, 0L, 0L), 2);
		assertThat(reply.now()).isEqualTo(1_000);
		assertThat(reply.allAllowed()).isFalse();
		assertThat(reply.outcomes()).containsExactly(new ScriptReply.KeyOutcome(true, 4, 0, 600, 250, false, 900),
				new ScriptReply.KeyOutcome(false, 0, 30, 80, 0, true, 0));
	}

	@Test
	void decodesAPenalizedOutcomeAsAPenalizedStatus() {
		KeyedLimit target = new KeyedLimit("login", "alice", Limit.fixedWindow("5/1m"));
		ScriptReply reply = ScriptReply.decode(List.of(1_000L, 0L, 0L, 0L, 500L, 500L, 0L, 0L, 0L, 1L), 1);
		assertThat(reply.outcomes().get(0).status(target)).isEqualTo(LimitStatus.ofPenalty(target, 500));
	}

	@Test
	void decodesAReplyWithNoKeys() {
		ScriptReply reply = ScriptReply.decode(List.of(5L, 1L), 0);
		assertThat(reply.allAllowed()).isTrue();
		assertThat(reply.outcomes()).isEmpty();
	}

	@Test
	void turnsAnOutcomeIntoTheStatusOfItsLimit() {
		KeyedLimit target = new KeyedLimit("api", "alice", Limit.tokenBucket("10/1s"));
		ScriptReply.KeyOutcome outcome = new ScriptReply.KeyOutcome(false, 3, 40, 70, 5, true, 9);
		assertThat(outcome.status(target)).isEqualTo(new LimitStatus(target, false, 3, 40, 70, 5, true));
		assertThat(outcome.withRemaining(8)).isEqualTo(new ScriptReply.KeyOutcome(false, 8, 40, 70, 5, true, 9));
	}

	@Test
	void rejectsAReplyOfAnotherLength() {
		List<Object> oneKey = List.of(1L, 1L, 1L, 2L, 0L, 3L, 0L, 0L, 0L, 0L);
		assertThat(ScriptReply.decode(oneKey, 1).outcomes()).hasSize(1);
		assertThatIllegalStateException().isThrownBy(() -> ScriptReply.decode(oneKey, 2))
			.withMessage("Unexpected reply from the rate-limit script: " + oneKey);
		assertThatIllegalStateException().isThrownBy(() -> ScriptReply.decode(oneKey.subList(0, 9), 1));
		assertThatIllegalStateException().isThrownBy(() -> ScriptReply.decode(List.of(1L, 1L), 1));
	}

	@Test
	void rejectsAReplyWithAValueThatIsNotANumber() {
		assertThatIllegalStateException()
			.isThrownBy(() -> ScriptReply.decode(List.of(1L, 1L, 1L, "2", 0L, 3L, 0L, 0L, 0L, 0L), 1))
			.withMessageStartingWith("Unexpected reply from the rate-limit script: ");
		assertThatIllegalStateException()
			.isThrownBy(() -> ScriptReply.decode(List.of("OK".getBytes(), 1L, 1L, 2L, 0L, 3L, 0L, 0L, 0L, 0L), 1));
	}

}
