package dev.ratelimit.core.redis;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;

import dev.ratelimit.core.Algorithm;
import dev.ratelimit.core.KeyedLimit;
import dev.ratelimit.core.Limit;

import org.jspecify.annotations.Nullable;

/**
 * The distinct state keys of one call, and their groups decided by one script call each:
 * all keys at once, or one group per hash slot in a cluster. A limit given twice is
 * decided once, as in memory.
 */
final class SlotPlan {

	private final List<KeyedLimit> targets = new ArrayList<>();

	private final List<String> keys = new ArrayList<>();

	/** For each limit of the call, the index of its distinct key. */
	private final int[] keyIndex;

	/** Per distinct key: the lease id of a concurrency limit, else empty. */
	private final String[] leaseIds;

	/**
	 * Per distinct key: the penalty key of its policy and client key if its limit carries
	 * a penalty, else {@code null}.
	 */
	private final @Nullable String[] penaltyKeys;

	/**
	 * Per distinct key whose limit names counterparts: the key that holds until when the
	 * shares it took over count; else {@code null}.
	 */
	private final @Nullable String[] carriedKeys;

	/**
	 * Per distinct key: the counterparts its script call reads, those whose state is not
	 * one of this call's own keys, and their keys.
	 */
	private final List<List<KeyedLimit>> counterparts = new ArrayList<>();

	private final List<List<String>> counterpartKeys = new ArrayList<>();

	SlotPlan(List<KeyedLimit> limits, RedisKeys redisKeys) {
		this.keyIndex = new int[limits.size()];
		Map<String, Integer> seen = new HashMap<>();
		for (int i = 0; i < limits.size(); i++) {
			KeyedLimit target = limits.get(i);
			String key = redisKeys.key(target);
			Integer known = seen.get(key);
			if (known == null) {
				known = this.targets.size();
				seen.put(key, known);
				this.targets.add(target);
				this.keys.add(key);
			}
			this.keyIndex[i] = known;
		}
		this.leaseIds = new String[this.targets.size()];
		this.penaltyKeys = new String[this.targets.size()];
		for (int j = 0; j < this.leaseIds.length; j++) {
			KeyedLimit target = this.targets.get(j);
			this.leaseIds[j] = (target.limit().algorithm() == Algorithm.CONCURRENCY) ? newLeaseId() : "";
			this.penaltyKeys[j] = (target.limit().penaltyMicros() > 0) ? redisKeys.penaltyKey(target) : null;
		}
		this.carriedKeys = new String[this.targets.size()];
		for (int j = 0; j < this.carriedKeys.length; j++) {
			KeyedLimit target = this.targets.get(j);
			List<KeyedLimit> read = new ArrayList<>(0);
			List<String> readKeys = new ArrayList<>(0);
			if (!target.carryFrom().isEmpty()) {
				this.carriedKeys[j] = redisKeys.carriedKey(target);
				for (KeyedLimit counterpart : target.counterparts()) {
					String key = redisKeys.key(counterpart);
					if (!seen.containsKey(key)) {
						read.add(counterpart);
						readKeys.add(key);
					}
				}
			}
			this.counterparts.add(read);
			this.counterpartKeys.add(readKeys);
		}
	}

	/**
	 * Returns the keys of one script call on a group: the group's state keys, in order,
	 * then the distinct penalty keys of its limits that carry a penalty, in the order
	 * first met.
	 * @param group the indexes of the distinct keys the call decides
	 * @return the keys
	 */
	List<String> keys(int[] group) {
		List<String> keys = new ArrayList<>(group.length);
		for (int j : group) {
			keys.add(this.keys.get(j));
		}
		for (int j : group) {
			String penaltyKey = this.penaltyKeys[j];
			if (penaltyKey != null && !keys.subList(group.length, keys.size()).contains(penaltyKey)) {
				keys.add(penaltyKey);
			}
		}
		int carryKeys = keys.size();
		for (int j : group) {
			if (this.carriedKeys[j] != null) {
				addOnce(keys, carryKeys, this.carriedKeys[j]);
				for (String key : this.counterpartKeys.get(j)) {
					addOnce(keys, carryKeys, key);
				}
			}
		}
		return keys;
	}

	private static void addOnce(List<String> keys, int from, String key) {
		if (!keys.subList(from, keys.size()).contains(key)) {
			keys.add(key);
		}
	}

	/**
	 * Returns, for each member of a group whose limit names counterparts, what its script
	 * call reads to take a share over: the places (from 1) among {@link #keys(int[]) the
	 * group's keys} of the key holding until when the shares it took over count and of
	 * its counterparts' keys; else {@code null}.
	 * @param group the indexes of the distinct keys the call decides
	 * @return per member of the group, what it reads, or {@code null}
	 */
	@Nullable Carry[] carries(int[] group) {
		Carry[] carries = new Carry[group.length];
		List<String> keys = null;
		for (int i = 0; i < group.length; i++) {
			int j = group[i];
			if (this.carriedKeys[j] == null) {
				continue;
			}
			if (keys == null) {
				keys = keys(group);
			}
			List<String> counterpartKeys = this.counterpartKeys.get(j);
			int[] places = new int[counterpartKeys.size()];
			List<Limit> limits = new ArrayList<>(places.length);
			for (int k = 0; k < places.length; k++) {
				places[k] = keys.lastIndexOf(counterpartKeys.get(k)) + 1;
				limits.add(this.counterparts.get(j).get(k).limit());
			}
			carries[i] = new Carry(keys.lastIndexOf(this.carriedKeys[j]) + 1, places, limits);
		}
		return carries;
	}

	/**
	 * What the script reads for one key to take a share over.
	 *
	 * @param carriedPlace the place in {@code KEYS} of the key holding until when the
	 * shares it took over count
	 * @param places the places in {@code KEYS} of its counterparts' state keys, one per
	 * counterpart (counterparts that share a state share a place)
	 * @param limits the counterparts' limits
	 */
	record Carry(int carriedPlace, int[] places, List<Limit> limits) {
	}

	/**
	 * Returns, for each member of a group, the place (from 1) of its penalty key among
	 * {@link #keys(int[]) the group's keys}, or 0 if its limit carries no penalty.
	 * @param group the indexes of the distinct keys the call decides
	 * @return the places, one per member of the group
	 */
	int[] penaltyKeyPlaces(int[] group) {
		int[] places = new int[group.length];
		List<String> penaltyKeys = new ArrayList<>(0);
		for (int i = 0; i < group.length; i++) {
			String penaltyKey = this.penaltyKeys[group[i]];
			if (penaltyKey != null) {
				int known = penaltyKeys.indexOf(penaltyKey);
				if (known < 0) {
					known = penaltyKeys.size();
					penaltyKeys.add(penaltyKey);
				}
				places[i] = group.length + known + 1;
			}
		}
		return places;
	}

	/**
	 * Returns the number of distinct keys.
	 * @return the number of distinct keys
	 */
	int size() {
		return this.targets.size();
	}

	/**
	 * Returns the limit of a distinct key (the first given, if several share it).
	 * @param j the index of the distinct key
	 * @return the keyed limit
	 */
	KeyedLimit target(int j) {
		return this.targets.get(j);
	}

	/**
	 * Returns a distinct key's name in Redis.
	 * @param j the index of the distinct key
	 * @return the key
	 */
	String key(int j) {
		return this.keys.get(j);
	}

	/**
	 * Returns the index of the distinct key of one of the call's limits.
	 * @param i the index of the limit in the call
	 * @return the index of its distinct key
	 */
	int keyIndex(int i) {
		return this.keyIndex[i];
	}

	/**
	 * Returns the id of the lease a call would take on a distinct key: fresh for a
	 * concurrency limit, else empty.
	 * @param j the index of the distinct key
	 * @return the lease id, or an empty string
	 */
	String leaseId(int j) {
		return this.leaseIds[j];
	}

	/**
	 * Returns the groups of keys decided by one script call each: all keys at once, or
	 * one group per slot in a cluster, in the order the limits were given.
	 * @param cluster whether Redis is a cluster
	 * @return the groups, each the indexes of its distinct keys
	 */
	List<int[]> groups(boolean cluster) {
		if (!cluster || size() == 1) {
			int[] all = new int[size()];
			for (int j = 0; j < all.length; j++) {
				all[j] = j;
			}
			return List.of(all);
		}
		Map<Integer, List<Integer>> bySlot = new LinkedHashMap<>();
		for (int j = 0; j < size(); j++) {
			bySlot.computeIfAbsent(RedisKeys.slot(this.keys.get(j)), (slot) -> new ArrayList<>()).add(j);
		}
		List<int[]> groups = new ArrayList<>(bySlot.size());
		for (List<Integer> members : bySlot.values()) {
			groups.add(members.stream().mapToInt(Integer::intValue).toArray());
		}
		return groups;
	}

	private static String newLeaseId() {
		ThreadLocalRandom random = ThreadLocalRandom.current();
		return Long.toHexString(random.nextLong() | Long.MIN_VALUE)
				+ Long.toHexString(random.nextLong() | Long.MIN_VALUE);
	}

}
