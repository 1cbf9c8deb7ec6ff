package dev.ratelimit.core.redis.testing;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import org.awaitility.core.ConditionTimeoutException;

import org.springframework.data.redis.connection.RedisClusterConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import static org.awaitility.Awaitility.await;

/**
 * A Redis Cluster of three masters (no replicas) built from {@link RedisServer} processes: each node has its own
 * directory and cluster config file, the 16384 slots are split in three with {@code CLUSTER ADDSLOTS}, the nodes are
 * joined with {@code CLUSTER MEET}, and {@link #start()} returns once every node reports {@code cluster_state:ok}.
 */
public final class RedisCluster implements AutoCloseable {

	private static final int SLOTS = 16384;

	private final List<RedisServer> nodes;

	private RedisCluster(List<RedisServer> nodes) {
		this.nodes = nodes;
	}

	/**
	 * Starts a three-master cluster.
	 * @return the cluster, ready
	 */
	public static RedisCluster start() {
		List<RedisServer> nodes = new ArrayList<>();
		try {
			for (int i = 0; i < 3; i++) {
				nodes.add(RedisServer.start("--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf",
						"--cluster-node-timeout", "5000"));
			}
			RedisCluster cluster = new RedisCluster(nodes);
			cluster.form();
			return cluster;
		}
		catch (RuntimeException ex) {
			nodes.forEach(RedisServer::close);
			throw ex;
		}
	}

	private void form() {
		for (int i = 0; i < this.nodes.size(); i++) {
			int from = i * SLOTS / this.nodes.size();
			int to = (i + 1) * SLOTS / this.nodes.size() - 1;
			List<String> command = new ArrayList<>();
			command.add("CLUSTER");
			command.add("ADDSLOTS");
			for (int slot = from; slot <= to; slot++) {
				command.add(Integer.toString(slot));
			}
			try (RespClient client = client(i)) {
				client.command(command.toArray(new String[0]));
			}
		}
		try (RespClient first = client(0)) {
			for (int i = 1; i < this.nodes.size(); i++) {
				first.command("CLUSTER", "MEET", "127.0.0.1", Integer.toString(this.nodes.get(i).port()));
			}
		}
		awaitOk(Duration.ofSeconds(20));
	}

	private void awaitOk(Duration timeout) {
		try {
			await().atMost(timeout).pollDelay(Duration.ZERO).pollInterval(Duration.ofMillis(50)).until(this::isOk);
		}
		catch (ConditionTimeoutException ex) {
			throw new IllegalStateException("The test cluster did not reach cluster_state:ok within " + timeout);
		}
	}

	private boolean isOk() {
		for (int i = 0; i < this.nodes.size(); i++) {
			try (RespClient client = client(i)) {
				String info = client.text("CLUSTER", "INFO");
				if (!info.contains("cluster_state:ok") || !info.contains("cluster_known_nodes:" + this.nodes.size())
						|| !info.contains("cluster_slots_ok:" + SLOTS)) {
					return false;
				}
			}
		}
		return true;
	}

	private RespClient client(int node) {
		return new RespClient("127.0.0.1", this.nodes.get(node).port(), 5000);
	}

	/**
	 * Returns the nodes.
	 * @return the nodes, in slot order
	 */
	public List<RedisServer> nodes() {
		return this.nodes;
	}

	/**
	 * Returns the node that owns the given slot.
	 * @param slot the slot
	 * @return the node
	 */
	public RedisServer nodeOf(int slot) {
		return this.nodes.get(slot * this.nodes.size() / SLOTS);
	}

	/**
	 * Returns the cluster configuration for connection factories.
	 * @return the configuration
	 */
	public RedisClusterConfiguration configuration() {
		return new RedisClusterConfiguration(
				this.nodes.stream().map((node) -> "127.0.0.1:" + node.port()).toList());
	}

	/**
	 * Returns a started Lettuce cluster connection factory; the caller destroys it.
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
		this.nodes.forEach(RedisServer::close);
	}

}
