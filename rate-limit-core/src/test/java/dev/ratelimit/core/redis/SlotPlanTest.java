package dev.ratelimit.core.redis;

import java.util.List;

import dev.ratelimit.core.KeyedLimit;
import dev.ratelimit.core.Limit;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Tests for {@link SlotPlan}.
 */
class SlotPlanTest {

	private final RedisKeys keys = new RedisKeys("rl");

	private final KeyedLimit perClient = new KeyedLimit("api", "alice", Limit.tokenBucket("10/1s"));

	private final KeyedLimit global = new KeyedLimit("global", "all", Limit.fixedWindow("1000/1m"));

	private final KeyedLimit perClientInFlight = new KeyedLimit("api", "alice", Limit.concurrency(3));

	@Test
	void decidesALimitGivenTwiceOnce() {
		SlotPlan plan = new SlotPlan(List.of(this.perClient, this.global, this.perClient, this.perClientInFlight),
				this.keys);
		assertThat(plan.size()).isEqualTo(3);
		assertThat(List.of(plan.target(0), plan.target(1), plan.target(2))).containsExactly(this.perClient, this.global,
				this.perClientInFlight);
		assertThat(List.of(plan.key(0), plan.key(1), plan.key(2))).containsExactly(this.keys.key(this.perClient),
				this.keys.key(this.global), this.keys.key(this.perClientInFlight));
		assertThat(List.of(plan.keyIndex(0), plan.keyIndex(1), plan.keyIndex(2), plan.keyIndex(3))).containsExactly(0,
				1, 0, 2);
	}

	@Test
	void decidesEveryKeyInOneCallOutsideACluster() {
		SlotPlan plan = new SlotPlan(List.of(this.perClient, this.global, this.perClientInFlight), this.keys);
		assertThat(plan.groups(false)).containsExactly(new int[] { 0, 1, 2 });
	}

	@Test
	void decidesOneKeyInOneCallInACluster() {
		assertThat(new SlotPlan(List.of(this.global), this.keys).groups(true)).containsExactly(new int[] { 0 });
	}

	@Test
	void groupsKeysBySlotInTheOrderTheLimitsWereGivenInACluster() {
		assertThat(RedisKeys.slot(this.keys.key(this.global)))
			.isNotEqualTo(RedisKeys.slot(this.keys.key(this.perClient)));
		SlotPlan plan = new SlotPlan(List.of(this.perClient, this.global, this.perClientInFlight), this.keys);
		assertThat(plan.groups(true)).containsExactly(new int[] { 0, 2 }, new int[] { 1 });
		SlotPlan globalFirst = new SlotPlan(List.of(this.global, this.perClient, this.perClientInFlight), this.keys);
		assertThat(globalFirst.groups(true)).containsExactly(new int[] { 0 }, new int[] { 1, 2 });
	}

	@Test
	void givesEachConcurrencyKeyAFreshLeaseId() {
		KeyedLimit otherInFlight = new KeyedLimit("api", "bob", Limit.concurrency(3));
		SlotPlan plan = new SlotPlan(List.of(this.perClient, this.perClientInFlight, otherInFlight), this.keys);
		assertThat(plan.leaseId(0)).isEmpty();
		assertThat(plan.leaseId(1)).matches("[0-9a-f]{32}");
		assertThat(plan.leaseId(2)).matches("[0-9a-f]{32}").isNotEqualTo(plan.leaseId(1));
		SlotPlan again = new SlotPlan(List.of(this.perClient, this.perClientInFlight, otherInFlight), this.keys);
		assertThat(again.leaseId(1)).isNotEqualTo(plan.leaseId(1));
	}

}
