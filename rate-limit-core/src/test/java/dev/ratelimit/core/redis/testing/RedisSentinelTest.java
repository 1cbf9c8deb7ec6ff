package dev.ratelimit.core.redis.testing;

import java.time.Duration;

import org.junit.jupiter.api.Test;

import org.springframework.data.redis.connection.RedisConnection;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The Sentinel setup promotes the replica when the master is killed, and keeps what the
 * master had replicated.
 */
class RedisSentinelTest {

	@Test
	void promotesTheReplicaWhenTheMasterIsKilledAndKeepsReplicatedKeys() {
		try (RedisSentinel sentinel = RedisSentinel.start()) {
			RedisServer replica = sentinel.replica();
			try (RespClient master = sentinel.master().endpoint().client()) {
				master.command("SET", "kept", "yes");
				assertThat(master.number("WAIT", "1", "5000")).isEqualTo(1);
			}
			assertThat(sentinel.killMaster(Duration.ofSeconds(20))).isSameAs(replica);
			assertThat(sentinel.master()).isSameAs(replica);
			LettuceConnectionFactory factory = sentinel.lettuce();
			try (RedisConnection connection = factory.getConnection()) {
				assertThat(connection.stringCommands().get("kept".getBytes())).isEqualTo("yes".getBytes());
			}
			finally {
				factory.destroy();
			}
		}
	}

}
