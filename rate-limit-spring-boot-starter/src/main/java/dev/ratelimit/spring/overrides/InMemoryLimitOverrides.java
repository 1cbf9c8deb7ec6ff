package dev.ratelimit.spring.overrides;

import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import org.jspecify.annotations.Nullable;

/**
 * Overrides held in this application's memory: those of the in-memory backend, and the
 * local copy of the Redis store. Thread-safe.
 */
public class InMemoryLimitOverrides implements LimitOverrides {

	private volatile Map<String, Map<String, LimitOverride>> byPolicy = new ConcurrentHashMap<>();

	@Override
	public @Nullable LimitOverride find(String policy, String client) {
		Map<String, LimitOverride> clients = this.byPolicy.get(policy);
		return (clients != null) ? clients.get(client) : null;
	}

	@Override
	public List<LimitOverride> list() {
		List<LimitOverride> all = new ArrayList<>();
		this.byPolicy.values().forEach((clients) -> all.addAll(clients.values()));
		return all;
	}

	@Override
	public void put(LimitOverride override) {
		// compute, so that a put and a remove of the policy's last client never lose one
		// another
		this.byPolicy.compute(override.policy(), (policy, clients) -> {
			Map<String, LimitOverride> next = (clients != null) ? clients : new ConcurrentHashMap<>();
			next.put(override.client(), override);
			return next;
		});
	}

	@Override
	public boolean remove(String policy, String client) {
		boolean[] removed = new boolean[1];
		this.byPolicy.computeIfPresent(policy, (name, clients) -> {
			removed[0] = clients.remove(client) != null;
			return clients.isEmpty() ? null : clients;
		});
		return removed[0];
	}

	@Override
	public boolean mayOverride(String policy) {
		return this.byPolicy.containsKey(policy);
	}

	/**
	 * Replaces every override at once, as a look-up sees either the old set or the new.
	 * @param overrides the new overrides
	 */
	protected void replaceAll(Collection<LimitOverride> overrides) {
		Map<String, Map<String, LimitOverride>> next = new ConcurrentHashMap<>();
		for (LimitOverride override : overrides) {
			next.computeIfAbsent(override.policy(), (policy) -> new ConcurrentHashMap<>())
				.put(override.client(), override);
		}
		this.byPolicy = next;
	}

}
