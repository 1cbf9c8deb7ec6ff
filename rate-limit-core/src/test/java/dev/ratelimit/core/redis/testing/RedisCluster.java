package dev.ratelimit.core.redis.testing;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import org.jspecify.annotations.Nullable;

import org.springframework.data.redis.connection.RedisClusterConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

/**
 * A Redis Cluster of three masters built from {@link RedisServer} processes: each node
 * has its own directory and cluster config file, the 16384 slots are split in three with
 * {@code CLUSTER ADDSLOTS}, the nodes are joined with {@code CLUSTER MEET}, and
 * {@link #start()} returns once every node reports {@code cluster_state:ok}.
 * {@link #startWithReplicas()} gives each master a replica ({@code CLUSTER REPLICATE})
 * and a node timeout of one second, so that {@link #killMaster(int, Duration)} sees the
 * replica promoted within seconds.
 */
public final class RedisCluster implements AutoCloseable {

	private static final int SLOTS = 16384;

	private static final int MASTERS = 3;

	private static final Duration READY = Duration.ofSeconds(30);

	/**
	 * The masters, in slot order: a promoted replica takes the place of its failed
	 * master.
	 */
	private final List<RedisServer> masters;

	/**
	 * The replica of each master, in slot order, or {@code null} for none (or none left).
	 */
	private final List<@Nullable RedisServer> replicas;

	/**
	 * Every server started, live or killed, for {@link #close()} and the count of known
	 * nodes.
	 */
	private final List<RedisServer> servers;

	private RedisCluster(List<RedisServer> masters, List<@Nullable RedisServer> replicas, List<RedisServer> servers) {
		this.masters = masters;
		this.replicas = replicas;
		this.servers = servers;
	}

	/**
	 * Starts a three-master cluster.
	 * @return the cluster, ready
	 */
	public static RedisCluster start() {
		return start(false, "5000");
	}

	/**
	 * Starts a three-master cluster whose nodes take more {@code redis-server} arguments,
	 * such as {@code --cluster-require-full-coverage no}.
	 * @param nodeArguments the arguments of every node
	 * @return the cluster, ready
	 */
	public static RedisCluster start(String... nodeArguments) {
		return start(false, "5000", nodeArguments);
	}

	/**
	 * Starts a cluster of three masters and three replicas, one per master, with a node
	 * timeout of one second.
	 * @return the cluster, ready, every replica in sync with its master
	 */
	public static RedisCluster startWithReplicas() {
		return start(true, "1000");
	}

	private static RedisCluster start(boolean withReplicas, String nodeTimeoutMillis, String... nodeArguments) {
		List<RedisServer> servers = new ArrayList<>();
		try {
			int count = withReplicas ? 2 * MASTERS : MASTERS;
			List<String> arguments = new ArrayList<>(List.of("--cluster-enabled", "yes", "--cluster-config-file",
					"nodes.conf", "--cluster-node-timeout", nodeTimeoutMillis, "--repl-diskless-sync-delay", "0"));
			arguments.addAll(List.of(nodeArguments));
			for (int i = 0; i < count; i++) {
				// without the delay a replica's first sync waits 5 s for more replicas to
				// share the transfer
				servers.add(RedisServer.start(arguments.toArray(new String[0])));
			}
			List<@Nullable RedisServer> replicas = new ArrayList<>();
			for (int i = 0; i < MASTERS; i++) {
				replicas.add(withReplicas ? servers.get(MASTERS + i) : null);
			}
			RedisCluster cluster = new RedisCluster(new ArrayList<>(servers.subList(0, MASTERS)), replicas,
					List.copyOf(servers));
			cluster.form();
			return cluster;
		}
		catch (RuntimeException ex) {
			servers.forEach(RedisServer::close);
			throw ex;
		}
	}

	private void form() {
		for (int i = 0; i < MASTERS; i++) {
			int from = i * SLOTS / MASTERS;
			int to = (i + 1) * SLOTS / MASTERS - 1;
			List<String> command = new ArrayList<>();
			command.add("CLUSTER");
			command.add("ADDSLOTS");
			for (int slot = from; slot <= to; slot++) {
				command.add(Integer.toString(slot));
			}
			try (RespClient client = this.masters.get(i).endpoint().client()) {
				client.command(command.toArray(new String[0]));
			}
		}
		try (RespClient first = this.servers.get(0).endpoint().client()) {
			for (int i = 1; i < this.servers.size(); i++) {
				first.command("CLUSTER", "MEET", "127.0.0.1", Integer.toString(this.servers.get(i).port()));
			}
		}
		for (int i = 0; i < MASTERS; i++) {
			RedisServer replica = this.replicas.get(i);
			if (replica != null) {
				String masterId = nodeId(this.masters.get(i));
				// refused until the gossip has told the replica of its master
				Polling.until("node " + replica + " to replicate " + this.masters.get(i), READY, () -> {
					try (RespClient client = replica.endpoint().client()) {
						client.command("CLUSTER", "REPLICATE", masterId);
						return true;
					}
				});
			}
		}
		Polling.until("cluster_state:ok on every node, every replica in sync", READY, this::isOk);
	}

	private static String nodeId(RedisServer node) {
		try (RespClient client = node.endpoint().client()) {
			return client.text("CLUSTER", "MYID");
		}
	}

	private boolean isOk() {
		for (RedisServer node : liveNodes()) {
			try (RespClient client = node.endpoint().client()) {
				String info = client.text("CLUSTER", "INFO");
				if (!info.contains("cluster_state:ok") || !info.contains("cluster_known_nodes:" + this.servers.size())
						|| !info.contains("cluster_slots_ok:" + SLOTS)) {
					return false;
				}
			}
		}
		for (RedisServer replica : this.replicas) {
			if (replica != null && !Replication.isLinkUp(replica)) {
				return false;
			}
		}
		return true;
	}

	/**
	 * Waits until every live node reports {@code cluster_state:ok}, knows every node and
	 * sees every slot served, as after a master that was killed is started again.
	 * @param timeout the longest wait
	 */
	public void awaitReady(Duration timeout) {
		Polling.until("cluster_state:ok on every node, every replica in sync", timeout, this::isOk);
	}

	private List<RedisServer> liveNodes() {
		return this.servers.stream().filter(RedisServer::isRunning).toList();
	}

	/**
	 * Kills a master (SIGKILL, as a crash) and waits until its replica has taken over its
	 * slots and every live node reports {@code cluster_state:ok}. The old master stays
	 * down; the replica takes its place in {@link #nodes()}.
	 * @param index the master's place in slot order (0 to 2)
	 * @param timeout the longest wait for the promotion
	 * @return the promoted replica
	 * @throws IllegalStateException if the master has no replica, or it is not promoted
	 * within the timeout
	 */
	public synchronized RedisServer killMaster(int index, Duration timeout) {
		RedisServer replica = this.replicas.get(index);
		if (replica == null) {
			throw new IllegalStateException(
					"Master " + index + " has no replica to promote; start the cluster with " + "startWithReplicas()");
		}
		this.masters.get(index).stop();
		// no longer a replica in sync, whatever comes of the failover
		this.replicas.set(index, null);
		Polling.until("the promotion of " + replica, timeout,
				() -> Replication.role(replica).equals("master") && isOk());
		this.masters.set(index, replica);
		return replica;
	}

	/**
	 * Returns the masters.
	 * @return the masters, in slot order
	 */
	public synchronized List<RedisServer> nodes() {
		return List.copyOf(this.masters);
	}

	/**
	 * Returns the replicas that are not yet promoted.
	 * @return the replicas, in the slot order of their masters
	 */
	public synchronized List<RedisServer> replicas() {
		return this.replicas.stream().<RedisServer>mapMulti((replica, out) -> {
			if (replica != null) {
				out.accept(replica);
			}
		}).toList();
	}

	/**
	 * Returns the master that owns the given slot.
	 * @param slot the slot
	 * @return the node
	 */
	public synchronized RedisServer nodeOf(int slot) {
		return this.masters.get(slot * MASTERS / SLOTS);
	}

	/**
	 * Returns every live node as {@code host:port} pairs, as
	 * {@code spring.data.redis.cluster.nodes} takes them.
	 * @return the addresses
	 */
	public List<String> nodeAddresses() {
		return liveNodes().stream().map((node) -> "127.0.0.1:" + node.port()).toList();
	}

	/**
	 * Returns the cluster configuration for connection factories.
	 * @return the configuration
	 */
	public RedisClusterConfiguration configuration() {
		return new RedisClusterConfiguration(nodeAddresses());
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
		this.servers.forEach(RedisServer::close);
	}

}
