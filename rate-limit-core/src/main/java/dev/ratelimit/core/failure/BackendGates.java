package dev.ratelimit.core.failure;

import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.BiConsumer;
import java.util.function.LongSupplier;

import org.jspecify.annotations.Nullable;

/**
 * The gates of a store: one for the store as a whole, and one per part of a store whose
 * parts fail apart (the masters of a Redis Cluster), so that one part late or down leaves
 * the calls of the others to the store. A call enters the gates of every part its limits
 * live on.
 */
final class BackendGates {

	/*
	 * A call is routed by the worst of its gates: any part down, the failure mode decides
	 * it; else any part late, it is decided here. A gate is made on a part's first call
	 * and forgotten once the part is gone from the store (a master that failed over);
	 * callers that still hold it report to a gate nobody reads, which is harmless.
	 */

	private final long coolDownNanos;

	private final LongSupplier nanoTime;

	/** The gate of the calls no part is known for: every call of a store of one part. */
	private final BackendGate whole;

	private final List<BackendGate> wholeOnly;

	private final Map<String, BackendGate> parts = new ConcurrentHashMap<>();

	/** Every gate, for the checks that read them all without a lock. */
	private volatile BackendGate[] all;

	BackendGates(long coolDownNanos, LongSupplier nanoTime) {
		this.coolDownNanos = coolDownNanos;
		this.nanoTime = nanoTime;
		this.whole = new BackendGate(coolDownNanos, nanoTime);
		this.wholeOnly = List.of(this.whole);
		this.all = new BackendGate[] { this.whole };
	}

	/**
	 * Returns the gates of a call's parts: the whole store's gate when it names none.
	 */
	List<BackendGate> of(List<String> parts) {
		if (parts.isEmpty()) {
			return this.wholeOnly;
		}
		if (parts.size() == 1) {
			return List.of(of(parts.get(0)));
		}
		List<BackendGate> gates = new ArrayList<>(parts.size());
		for (String part : parts) {
			gates.add(of(part));
		}
		return gates;
	}

	/**
	 * Returns the gate of a part, or of the whole store for {@code null}.
	 */
	BackendGate of(@Nullable String part) {
		if (part == null) {
			return this.whole;
		}
		BackendGate gate = this.parts.get(part);
		if (gate != null) {
			return gate;
		}
		synchronized (this) {
			gate = this.parts.computeIfAbsent(part, (name) -> new BackendGate(this.coolDownNanos, this.nanoTime));
			publish();
			return gate;
		}
	}

	/**
	 * Forgets the gates of parts the store no longer has.
	 */
	synchronized void retain(Collection<String> current) {
		if (this.parts.keySet().retainAll(current)) {
			publish();
		}
	}

	private void publish() {
		List<BackendGate> gates = new ArrayList<>(this.parts.size() + 1);
		gates.add(this.whole);
		gates.addAll(this.parts.values());
		this.all = gates.toArray(new BackendGate[0]);
	}

	BackendGate whole() {
		return this.whole;
	}

	/**
	 * Returns the gate of a part, or {@code null} if no call has met that part yet.
	 */
	@Nullable BackendGate part(String part) {
		return this.parts.get(part);
	}

	/**
	 * Returns whether every gate is up.
	 */
	boolean allUp() {
		for (BackendGate gate : this.all) {
			if (!gate.isUp()) {
				return false;
			}
		}
		return true;
	}

	/**
	 * Returns whether any gate is down.
	 */
	boolean anyDown() {
		for (BackendGate gate : this.all) {
			if (gate.isDown()) {
				return true;
			}
		}
		return false;
	}

	/**
	 * Returns the worst state of any gate: down, else late, else up.
	 */
	BackendState worst() {
		BackendState worst = BackendState.UP;
		for (BackendGate gate : this.all) {
			BackendState state = gate.state();
			if (state.compareTo(worst) > 0) {
				worst = state;
			}
		}
		return worst;
	}

	/**
	 * Hands each gate to the action with its part, {@code null} for the whole store's.
	 */
	void forEach(BiConsumer<@Nullable String, BackendGate> action) {
		action.accept(null, this.whole);
		this.parts.forEach(action);
	}

	/**
	 * Returns how a caller uses the store for a call on these gates:
	 * {@link BackendGate.Route#DOWN DOWN} if any part is down, else
	 * {@link BackendGate.Route#LATE LATE} if any is late, else
	 * {@link BackendGate.Route#ASK ASK}, after which the caller reports to every gate. A
	 * caller that does not ask gives back any probe it won.
	 */
	static BackendGate.Route enter(List<BackendGate> gates, Object caller) {
		if (gates.size() == 1) {
			return gates.get(0).enter(caller);
		}
		BackendGate.Route route = BackendGate.Route.ASK;
		for (BackendGate gate : gates) {
			BackendGate.Route entered = gate.enter(caller);
			if (entered == BackendGate.Route.DOWN) {
				route = BackendGate.Route.DOWN;
			}
			else if (entered == BackendGate.Route.LATE && route == BackendGate.Route.ASK) {
				route = BackendGate.Route.LATE;
			}
		}
		if (route != BackendGate.Route.ASK) {
			abandoned(gates, caller);
		}
		return route;
	}

	static void succeeded(List<BackendGate> gates, Object caller) {
		for (BackendGate gate : gates) {
			gate.succeeded(caller);
		}
	}

	static void abandoned(List<BackendGate> gates, Object caller) {
		for (BackendGate gate : gates) {
			gate.abandoned(caller);
		}
	}

	/**
	 * Returns how long the worst of the gates is expected to stay unusable, as
	 * {@link BackendGate#unusableForMicros} does for one.
	 */
	static long unusableForMicros(List<BackendGate> gates, long whileDownMicros) {
		long longest = 0;
		for (BackendGate gate : gates) {
			longest = Math.max(longest, gate.unusableForMicros(whileDownMicros));
		}
		return longest;
	}

}
