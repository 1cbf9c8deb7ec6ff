package dev.ratelimit.benchmarks;

import java.lang.management.ManagementFactory;
import java.lang.management.MemoryMXBean;
import java.util.Locale;
import java.util.concurrent.ConcurrentHashMap;

import io.github.bucket4j.Bandwidth;
import io.github.bucket4j.Bucket;

import dev.ratelimit.core.KeyedLimit;
import dev.ratelimit.core.Limit;
import dev.ratelimit.core.memory.InMemoryRateLimiter;

/**
 * Measures the heap a limiter retains per key: the used heap after a full GC, before and
 * after one call for each of N distinct keys, divided by N. Ours and Bucket4j (with a
 * {@code Bandwidth} per bucket, as its documentation shows, and with one shared) are
 * measured alike.
 */
public final class RetainedHeap {

	private static final String POLICY = "api";

	private RetainedHeap() {
	}

	/*
	 * The client names exist before the first measurement and outlive the second, so they
	 * are not counted on either side (an application holds its keys anyway). What is
	 * counted is everything the store keeps for a key: for ours the KeyedLimit it retains
	 * as the map key, its entry and the state; for Bucket4j the map entry, the bucket,
	 * its configuration and its state. Bucket4j is built as its documentation shows
	 * (addLimit(limit -> limit.capacity(..).refillGreedy(..)), a Bandwidth per bucket),
	 * and with one Bandwidth shared by all buckets.
	 *
	 * With a key length (KEY_CHARS, ours only), each call gets a key of that many
	 * characters made for it, as a request's header value is, and not kept by the
	 * benchmark: the store is then charged for whatever it keeps of a long key (a hostile
	 * client's 8 KB header, say), which the short names do not show.
	 */

	/**
	 * Runs the measurement in a JVM of its own per library:
	 * {@code java -cp benchmarks.jar dev.ratelimit.benchmarks.RetainedHeap ours 1000000 result.json},
	 * or {@code ... RetainedHeap ours 50000 result.json 8192} for 8 KB keys. Writes one
	 * JSON object to the file and a line to standard output.
	 * @param args the library, the number of keys, the result file and optionally the key
	 * length
	 * @throws Exception if the measurement fails
	 */
	public static void main(String[] args) throws Exception {
		if (args.length < 2) {
			System.err
				.println("usage: RetainedHeap ours|bucket4j|bucket4jSharedBandwidth KEYS [RESULT.json [KEY_CHARS]]");
			System.exit(2);
		}
		String library = args[0];
		int keys = Integer.parseInt(args[1]);
		int keyChars = (args.length > 3) ? Integer.parseInt(args[3]) : 0;
		if (keyChars > 0 && !"ours".equals(library)) {
			throw new IllegalArgumentException("KEY_CHARS applies to ours only (was given for '" + library + "')");
		}
		String[] names = new String[keys];
		for (int i = 0; i < keys; i++) {
			names[i] = "client-" + i;
		}
		String padding = "x".repeat(Math.max(0, keyChars));
		Limit limit = Limit.tokenBucket("60/1m");
		Bandwidth bandwidth = Bandwidth.builder()
			.capacity(60)
			.refillGreedy(60, java.time.Duration.ofMinutes(1))
			.build();
		long before = usedAfterGc();
		Object store = switch (library) {
			case "ours" -> {
				InMemoryRateLimiter limiter = InMemoryRateLimiter.builder().maxKeys(keys).build();
				for (String name : names) {
					String key = (keyChars > 0) ? (name + ":" + padding).substring(0, keyChars) : name;
					limiter.acquire(new KeyedLimit(POLICY, key, limit));
				}
				limiter.cleanUp();
				yield limiter;
			}
			case "bucket4j" -> {
				// As Bucket4j's documentation builds a bucket: its limit described in the
				// builder.
				ConcurrentHashMap<String, Bucket> buckets = new ConcurrentHashMap<>();
				for (String name : names) {
					buckets
						.computeIfAbsent(name, (key) -> Bucket.builder()
							.addLimit((spec) -> spec.capacity(60).refillGreedy(60, java.time.Duration.ofMinutes(1)))
							.build())
						.tryConsume(1);
				}
				yield buckets;
			}
			case "bucket4jSharedBandwidth" -> {
				// Frugal: every bucket shares one Bandwidth.
				ConcurrentHashMap<String, Bucket> buckets = new ConcurrentHashMap<>();
				for (String name : names) {
					buckets.computeIfAbsent(name, (key) -> Bucket.builder().addLimit(bandwidth).build()).tryConsume(1);
				}
				yield buckets;
			}
			default -> throw new IllegalArgumentException(
					"Unknown library '" + library + "'; use ours, bucket4j or bucket4jSharedBandwidth");
		};
		long after = usedAfterGc();
		double perKey = (double) (after - before) / keys;
		String size = (store instanceof InMemoryRateLimiter limiter) ? Long.toString(limiter.keyCount())
				: Integer.toString(((ConcurrentHashMap<?, ?>) store).size());
		String name = (keyChars > 0) ? library + "." + keyChars + "CharKeys" : library;
		System.out.printf(Locale.ROOT, "bytes-per-key %s %.1f (keys held %s of %d)%n", name, perKey, size, keys);
		if (args.length > 2) {
			String json = String.format(Locale.ROOT,
					"{\"measurements\": [{\"name\": \"RetainedHeap.%s\", \"score\": %.1f, \"error\": null, "
							+ "\"unit\": \"bytes/key\", \"keys\": %d, \"held\": %s}]}%n",
					name, perKey, keys, size);
			java.nio.file.Files.writeString(java.nio.file.Path.of(args[2]), json);
		}
		// Keep everything reachable until after the second measurement.
		if (names.length == 0 && store.hashCode() == 0) {
			System.out.println();
		}
	}

	private static long usedAfterGc() throws InterruptedException {
		MemoryMXBean memory = ManagementFactory.getMemoryMXBean();
		long used = Long.MAX_VALUE;
		for (int i = 0; i < 5; i++) {
			System.gc();
			Thread.sleep(100);
			used = Math.min(used, memory.getHeapMemoryUsage().getUsed());
		}
		return used;
	}

}
