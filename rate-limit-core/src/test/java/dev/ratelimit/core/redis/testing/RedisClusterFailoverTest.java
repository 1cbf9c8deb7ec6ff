package dev.ratelimit.core.redis.testing;

import java.time.Duration;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A cluster with replicas promotes a killed master's replica, which keeps the slots and
 * what was replicated to it.
 */
class RedisClusterFailoverTest {

	@Test
	void promotesTheReplicaOfAKilledMasterWithItsSlotsAndKeys() {
		try (RedisCluster cluster = RedisCluster.startWithReplicas()) {
			assertThat(cluster.nodes()).hasSize(3);
			assertThat(cluster.replicas()).hasSize(3);
			RedisServer replica = cluster.replicas().get(0);
			// "{b}kept" hashes to slot 3300, of the first master
			try (RespClient master = cluster.nodeOf(3300).endpoint().client()) {
				master.command("SET", "{b}kept", "yes");
				assertThat(master.number("WAIT", "1", "5000")).isEqualTo(1);
			}
			assertThat(cluster.killMaster(0, Duration.ofSeconds(20))).isSameAs(replica);
			assertThat(cluster.nodeOf(3300)).isSameAs(replica);
			assertThat(cluster.replicas()).hasSize(2);
			assertThat(cluster.nodeAddresses()).hasSize(5);
			try (RespClient promoted = replica.endpoint().client()) {
				assertThat(promoted.command("GET", "{b}kept")).isEqualTo("yes");
			}
		}
	}

}
