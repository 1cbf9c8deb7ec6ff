package dev.ratelimit.core.redis.testing;

import java.util.List;

/**
 * What a test server says of its replication: its role, and whether a replica's link to
 * its master is up.
 */
final class Replication {

	private Replication() {
	}

	/**
	 * Returns the first item of {@code ROLE}: {@code master}, {@code slave} or
	 * {@code sentinel}.
	 */
	static String role(RedisServer server) {
		try (RespClient client = server.endpoint().client()) {
			Object role = client.command("ROLE");
			return (role instanceof List<?> items && !items.isEmpty()) ? String.valueOf(items.get(0)) : "";
		}
	}

	/**
	 * Returns whether a replica has finished its first sync and follows its master.
	 */
	static boolean isLinkUp(RedisServer replica) {
		try (RespClient client = replica.endpoint().client()) {
			return client.text("INFO", "replication").contains("master_link_status:up");
		}
	}

}
