package dev.ratelimit.core.redis.testing;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

import org.springframework.data.redis.connection.RedisSentinelConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

/**
 * A Redis Sentinel setup built from {@link RedisServer} processes: one master, one
 * replica and three sentinels (quorum 2), each on a free port, nothing written to disk
 * but the sentinels' config files, which they rewrite in their own temporary directories.
 * Failover is quick: a master is down after {@value #DOWN_AFTER_MILLIS} ms without an
 * answer. {@link #killMaster(Duration)} kills the master (SIGKILL) and returns once its
 * replica has been promoted.
 */
public final class RedisSentinel implements AutoCloseable {

	/** The name the sentinels monitor the master under. */
	public static final String MASTER_NAME = "mymaster";

	static final int DOWN_AFTER_MILLIS = 1000;

	private static final Duration READY = Duration.ofSeconds(30);

	private final List<RedisServer> sentinels;

	/** Every data server started, live or killed, for {@link #close()}. */
	private final List<RedisServer> servers;

	private RedisServer master;

	private RedisServer replica;

	private RedisSentinel(RedisServer master, RedisServer replica, List<RedisServer> sentinels) {
		this.master = master;
		this.replica = replica;
		this.sentinels = sentinels;
		this.servers = List.of(master, replica);
	}

	/**
	 * Starts the master, its replica and three sentinels, and returns once every sentinel
	 * knows the replica and the two other sentinels (without which they could not agree
	 * on a failover).
	 * @return the setup, ready
	 */
	public static RedisSentinel start() {
		List<RedisServer> started = new ArrayList<>();
		try {
			// without the delay a replica's first sync waits 5 s for more replicas to
			// share the transfer
			RedisServer master = RedisServer.start("--repl-diskless-sync-delay", "0");
			started.add(master);
			RedisServer replica = RedisServer.start("--replicaof", "127.0.0.1", Integer.toString(master.port()),
					"--repl-diskless-sync-delay", "0");
			started.add(replica);
			String config = "sentinel monitor " + MASTER_NAME + " 127.0.0.1 " + master.port() + " 2\n"
					+ "sentinel down-after-milliseconds " + MASTER_NAME + " " + DOWN_AFTER_MILLIS + "\n"
					+ "sentinel failover-timeout " + MASTER_NAME + " 2000\n" + "sentinel parallel-syncs " + MASTER_NAME
					+ " 1\n";
			List<RedisServer> sentinels = new ArrayList<>();
			for (int i = 0; i < 3; i++) {
				RedisServer sentinel = RedisServer.startWithConfig(config, "--sentinel");
				started.add(sentinel);
				sentinels.add(sentinel);
			}
			RedisSentinel setup = new RedisSentinel(master, replica, List.copyOf(sentinels));
			Polling.until("the sentinels to know the replica and each other", READY, setup::isMonitored);
			return setup;
		}
		catch (RuntimeException ex) {
			started.forEach(RedisServer::close);
			throw ex;
		}
	}

	private boolean isMonitored() {
		if (!Replication.isLinkUp(this.replica)) {
			return false;
		}
		for (RedisServer sentinel : this.sentinels) {
			try (RespClient client = sentinel.endpoint().client()) {
				if (size(client.command("SENTINEL", "REPLICAS", MASTER_NAME)) != 1
						|| size(client.command("SENTINEL", "SENTINELS", MASTER_NAME)) != this.sentinels.size() - 1) {
					return false;
				}
			}
		}
		return true;
	}

	private static int size(Object reply) {
		return (reply instanceof List<?> list) ? list.size() : 0;
	}

	/**
	 * Kills the master (SIGKILL, as a crash) and waits until every sentinel names the
	 * replica as the master and the replica has taken the role. The old master stays
	 * down.
	 * @param timeout the longest wait for the promotion
	 * @return the new master
	 * @throws IllegalStateException if the replica is not promoted within the timeout
	 */
	public synchronized RedisServer killMaster(Duration timeout) {
		this.master.stop();
		RedisServer promoted = this.replica;
		Polling.until("the sentinels to promote " + promoted, timeout, () -> isPromoted(promoted));
		this.master = promoted;
		return promoted;
	}

	private boolean isPromoted(RedisServer candidate) {
		for (RedisServer sentinel : this.sentinels) {
			try (RespClient client = sentinel.endpoint().client()) {
				Object address = client.command("SENTINEL", "GET-MASTER-ADDR-BY-NAME", MASTER_NAME);
				if (!(address instanceof List<?> hostAndPort) || hostAndPort.size() != 2
						|| !String.valueOf(candidate.port()).equals(hostAndPort.get(1))) {
					return false;
				}
			}
		}
		return Replication.role(candidate).equals("master");
	}

	/**
	 * Returns the current master: the replica once {@link #killMaster(Duration)} has
	 * promoted it.
	 * @return the master
	 */
	public synchronized RedisServer master() {
		return this.master;
	}

	/**
	 * Returns the replica started with the master.
	 * @return the replica
	 */
	public synchronized RedisServer replica() {
		return this.replica;
	}

	/**
	 * Returns the sentinels.
	 * @return the three sentinels
	 */
	public List<RedisServer> sentinels() {
		return this.sentinels;
	}

	/**
	 * Returns the sentinels as {@code host:port} pairs, as
	 * {@code spring.data.redis.sentinel.nodes} takes them.
	 * @return the sentinel addresses
	 */
	public Set<String> sentinelNodes() {
		Set<String> nodes = new LinkedHashSet<>();
		this.sentinels.forEach((sentinel) -> nodes.add("127.0.0.1:" + sentinel.port()));
		return nodes;
	}

	/**
	 * Returns the Sentinel configuration for connection factories.
	 * @return the configuration
	 */
	public RedisSentinelConfiguration configuration() {
		return new RedisSentinelConfiguration(MASTER_NAME, sentinelNodes());
	}

	/**
	 * Returns a started Lettuce connection factory that finds the master through the
	 * sentinels; the caller destroys it.
	 * @return the factory
	 */
	public LettuceConnectionFactory lettuce() {
		LettuceConnectionFactory factory = new LettuceConnectionFactory(configuration());
		factory.afterPropertiesSet();
		factory.start();
		return factory;
	}

	@Override
	public void close() {
		this.sentinels.forEach(RedisServer::close);
		this.servers.forEach(RedisServer::close);
	}

}
