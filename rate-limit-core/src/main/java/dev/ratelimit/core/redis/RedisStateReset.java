package dev.ratelimit.core.redis;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import org.springframework.data.redis.connection.ClusterSlotHashUtil;
import org.springframework.data.redis.connection.RedisClusterConnection;
import org.springframework.data.redis.connection.RedisClusterNode;
import org.springframework.data.redis.connection.RedisConnection;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.RedisKeyCommands;
import org.springframework.data.redis.core.Cursor;
import org.springframework.data.redis.core.ScanOptions;

/**
 * Deletes every key that matches a pattern, with {@code SCAN} and {@code UNLINK}: on each
 * master of a cluster, else on the one server (standalone, or Sentinel's master). For
 * {@link RedisRateLimiter#resetAll()}, between tests; it waits for Redis without the
 * limiter's timeout, as a scan of many keys takes its time.
 */
final class RedisStateReset {

	/** Keys asked for per {@code SCAN} step, and most keys per {@code UNLINK}. */
	private static final int BATCH = 500;

	private RedisStateReset() {
	}

	/**
	 * Deletes the keys that match a glob pattern.
	 * @param connectionFactory the connection factory
	 * @param pattern the pattern, as {@code SCAN MATCH} reads it
	 * @return how many keys were deleted
	 */
	static long delete(RedisConnectionFactory connectionFactory, String pattern) {
		ScanOptions options = ScanOptions.scanOptions()
			.match(pattern.getBytes(StandardCharsets.UTF_8))
			.count(BATCH)
			.build();
		try (RedisConnection connection = connectionFactory.getConnection()) {
			if (connection instanceof RedisClusterConnection cluster) {
				long deleted = 0;
				for (RedisClusterNode node : cluster.clusterGetNodes()) {
					if (node.isMaster()) {
						deleted += delete(cluster.scan(node, options), cluster.keyCommands());
					}
				}
				return deleted;
			}
			return delete(connection.keyCommands().scan(options), connection.keyCommands());
		}
	}

	/**
	 * Unlinks the keys a cursor finds, a batch at a time, each {@code UNLINK} with keys
	 * of one hash slot (a cluster refuses a command whose keys span slots).
	 */
	private static long delete(Cursor<byte[]> cursor, RedisKeyCommands commands) {
		long deleted = 0;
		try (cursor) {
			Map<Integer, List<byte[]>> bySlot = new HashMap<>();
			int pending = 0;
			while (cursor.hasNext()) {
				byte[] key = cursor.next();
				bySlot.computeIfAbsent(ClusterSlotHashUtil.calculateSlot(key), (slot) -> new ArrayList<>()).add(key);
				if (++pending == BATCH) {
					deleted += unlink(bySlot, commands);
					pending = 0;
				}
			}
			deleted += unlink(bySlot, commands);
		}
		return deleted;
	}

	private static long unlink(Map<Integer, List<byte[]>> bySlot, RedisKeyCommands commands) {
		long deleted = 0;
		for (List<byte[]> keys : bySlot.values()) {
			Long count = commands.unlink(keys.toArray(new byte[0][]));
			deleted += (count != null) ? count : 0;
		}
		bySlot.clear();
		return deleted;
	}

}
