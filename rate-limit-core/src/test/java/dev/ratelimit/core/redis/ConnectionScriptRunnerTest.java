package dev.ratelimit.core.redis;

import java.lang.reflect.InvocationHandler;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;

import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import org.springframework.dao.DataAccessException;
import org.springframework.data.redis.connection.RedisClusterConnection;
import org.springframework.data.redis.connection.RedisConnection;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.RedisScriptingCommands;
import org.springframework.data.redis.connection.RedisZSetCommands;
import org.springframework.data.redis.connection.RedisSentinelConnection;

import static dev.ratelimit.core.redis.ConnectionScriptRunner.MAX_QUEUED;
import static dev.ratelimit.core.redis.ConnectionScriptRunner.MAX_WORKERS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.awaitility.Awaitility.await;

/**
 * The worker pool of {@link ConnectionScriptRunner} (Jedis and other blocking clients),
 * against a fake Redis whose script calls block until the test lets them answer: calls
 * beyond the workers wait for one instead of failing, a call still queued when its
 * deadline passes never reaches Redis (whether its caller waits or not), calls without a
 * deadline always run, and only a full queue fails a call at once.
 */
class ConnectionScriptRunnerTest {

	/** A deadline no call in these tests comes near. */
	private static final Duration GENEROUS = Duration.ofMinutes(1);

	/** How long a test waits for what it expects before failing. */
	private static final Duration PATIENCE = Duration.ofSeconds(30);

	private final FakeRedis redis = new FakeRedis();

	private final ConnectionScriptRunner runner = new ConnectionScriptRunner(this.redis, DecideScript.load().script());

	@AfterEach
	void close() {
		this.redis.answerAll();
		this.runner.close();
	}

	@Test
	void callsBeyondTheWorkersWaitForOneInsteadOfFailing() {
		CountDownLatch answer = this.redis.hold("busy");
		int inFlight = MAX_WORKERS + 36;
		List<Thread> callers = new ArrayList<>();
		List<CompletableFuture<List<Object>>> results = new ArrayList<>();
		for (int i = 0; i < inFlight; i++) {
			CompletableFuture<List<Object>> result = new CompletableFuture<>();
			Thread caller = new Thread(() -> {
				try {
					result.complete(this.runner.eval(keys("busy"), List.of(), deadline(GENEROUS)));
				}
				catch (Throwable ex) {
					result.completeExceptionally(ex);
				}
			}, "caller-" + i);
			caller.setDaemon(true);
			caller.start();
			callers.add(caller);
			results.add(result);
		}
		await().atMost(PATIENCE).until(() -> this.redis.calls("busy") == MAX_WORKERS);
		// Every call has been handed to the pool: its caller waits for the answer, or has
		// already failed (as every
		// call beyond the workers did when the pool refused work while all of them were
		// busy).
		await().atMost(PATIENCE).until(() -> callers.stream().allMatch(ConnectionScriptRunnerTest::handedOver));
		assertThat(this.redis.calls("busy")).isEqualTo(MAX_WORKERS);
		answer.countDown();
		for (CompletableFuture<List<Object>> result : results) {
			assertThat(result).succeedsWithin(PATIENCE);
		}
		assertThat(this.redis.calls("busy")).isEqualTo(inFlight);
	}

	@Test
	void aCallStillQueuedWhenItsDeadlinePassesNeverReachesRedis() {
		this.redis.hold("held");
		CountDownLatch answerOne = this.redis.hold("one");
		for (int i = 1; i < MAX_WORKERS; i++) {
			this.runner.evalAsync(keys("held"), List.of());
		}
		CompletableFuture<?> one = this.runner.evalAsync(keys("one"), List.of());
		await().atMost(PATIENCE)
			.until(() -> this.redis.calls("held") == MAX_WORKERS - 1 && this.redis.calls("one") == 1);
		long deadline = deadline(Duration.ofMillis(50));
		assertThatExceptionOfType(TimeoutException.class)
			.isThrownBy(() -> this.runner.eval(keys("late"), List.of(), deadline))
			.withMessage("Redis did not answer in time");
		CompletableFuture<?> next = this.runner.evalAsync(keys("next"), List.of());
		// One worker frees up; the queue is first in, first out, so it takes the late
		// call before the next one.
		answerOne.countDown();
		assertThat(one).succeedsWithin(PATIENCE);
		assertThat(next).succeedsWithin(PATIENCE);
		assertThat(this.redis.calls("next")).isOne();
		assertThat(this.redis.calls("late")).isZero();
	}

	@Test
	void aCallWhoseCallerTimedOutWhileItRanWithdrawsItsLeasesRightAfterIt() throws Exception {
		// a first call starts a worker and loads the fake's classes, so that the next one
		// reaches Redis in time
		this.runner.eval(keys("warm"), List.of(), deadline(GENEROUS));
		CountDownLatch answer = this.redis.hold("slow");
		assertThatExceptionOfType(TimeoutException.class).isThrownBy(
				() -> this.runner.eval(keys("slow"), List.of(), deadline(Duration.ofSeconds(1)), withdrawal("slow")))
			.withMessage("Redis did not answer in time");
		// still running: the removal must not overtake it
		assertThat(this.redis.calls("slow")).isOne();
		assertThat(this.redis.removals("slow")).isZero();
		answer.countDown();
		await().atMost(PATIENCE).until(() -> this.redis.removals("slow") == 1);
	}

	@Test
	void anAsynchronousCallStillQueuedAtItsDeadlineFailsThenAndNeverReachesRedis() {
		this.redis.hold("held");
		CountDownLatch answerOne = this.redis.hold("one");
		for (int i = 1; i < MAX_WORKERS; i++) {
			this.runner.evalAsync(keys("held"), List.of());
		}
		CompletableFuture<?> one = this.runner.evalAsync(keys("one"), List.of());
		await().atMost(PATIENCE)
			.until(() -> this.redis.calls("held") == MAX_WORKERS - 1 && this.redis.calls("one") == 1);
		CompletableFuture<List<Object>> late = this.runner.evalAsync(keys("late"), List.of(),
				deadline(Duration.ofMillis(50)), List.of());
		assertThat(late).failsWithin(PATIENCE)
			.withThrowableOfType(ExecutionException.class)
			.withCauseInstanceOf(TimeoutException.class);
		CompletableFuture<?> next = this.runner.evalAsync(keys("next"), List.of());
		answerOne.countDown();
		assertThat(one).succeedsWithin(PATIENCE);
		assertThat(next).succeedsWithin(PATIENCE);
		assertThat(this.redis.calls("late")).isZero();
	}

	@Test
	void anAsynchronousCallThatTimedOutWhileItRanWithdrawsItsLeasesRightAfterIt() throws Exception {
		this.runner.eval(keys("warm"), List.of(), deadline(GENEROUS));
		CountDownLatch answer = this.redis.hold("slow");
		CompletableFuture<List<Object>> slow = this.runner.evalAsync(keys("slow"), List.of(),
				deadline(Duration.ofSeconds(1)), withdrawal("slow"));
		assertThat(slow).failsWithin(PATIENCE)
			.withThrowableOfType(ExecutionException.class)
			.withCauseInstanceOf(TimeoutException.class);
		assertThat(this.redis.calls("slow")).isOne();
		assertThat(this.redis.removals("slow")).isZero();
		answer.countDown();
		await().atMost(PATIENCE).until(() -> this.redis.removals("slow") == 1);
		CompletableFuture<List<Object>> answered = this.runner.evalAsync(keys("answered"), List.of(),
				deadline(GENEROUS), withdrawal("answered"));
		assertThat(answered).succeedsWithin(PATIENCE);
		assertThat(this.redis.removals("answered")).isZero();
	}

	@Test
	void aCallAnsweredInTimeOrNeverSentWithdrawsNothing() throws Exception {
		this.runner.eval(keys("answered"), List.of(), deadline(GENEROUS), withdrawal("answered"));
		CountDownLatch pool = this.redis.holdConnections();
		assertThatExceptionOfType(TimeoutException.class).isThrownBy(() -> this.runner.eval(keys("unsent"), List.of(),
				deadline(Duration.ofSeconds(1)), withdrawal("unsent")));
		// it left the queue and waits in the client's pool
		assertThat(this.redis.waitingForConnection()).isOne();
		int closedBefore = this.redis.closed();
		pool.countDown();
		// the dropped call gets its connection, gives it back unused, and its worker
		// finishes
		await().atMost(PATIENCE).until(() -> this.redis.closed() > closedBefore);
		await().during(Duration.ofMillis(300))
			.atMost(PATIENCE)
			.until(() -> this.redis.removals("unsent") == 0 && this.redis.removals("answered") == 0);
		assertThat(this.redis.calls("unsent")).isZero();
	}

	private static List<ScriptRunner.Withdrawal> withdrawal(String key) {
		return List.of(new ScriptRunner.Withdrawal(key.getBytes(StandardCharsets.UTF_8),
				"lease:1".getBytes(StandardCharsets.UTF_8)));
	}

	@Test
	void aCallThatGetsAPooledConnectionAfterItsDeadlineNeverReachesRedis() {
		CountDownLatch pool = this.redis.holdConnections();
		assertThatExceptionOfType(TimeoutException.class)
			.isThrownBy(() -> this.runner.eval(keys("late"), List.of(), deadline(Duration.ofMillis(200))))
			.withMessage("Redis did not answer in time");
		// the call left the queue at once and is waiting in the client's pool
		assertThat(this.redis.waitingForConnection()).isOne();
		CompletableFuture<?> next = this.runner.evalAsync(keys("next"), List.of());
		pool.countDown();
		assertThat(next).succeedsWithin(PATIENCE);
		await().atMost(PATIENCE).until(() -> this.redis.closed() == 2);
		assertThat(this.redis.calls("next")).isOne();
		assertThat(this.redis.calls("late")).isZero();
	}

	@Test
	void callsWithoutADeadlineRunHoweverLongTheyWaitedForAWorker() {
		CountDownLatch answer = this.redis.hold("busy");
		List<CompletableFuture<?>> busy = new ArrayList<>();
		for (int i = 0; i < MAX_WORKERS; i++) {
			busy.add(this.runner.evalAsync(keys("busy"), List.of()));
		}
		await().atMost(PATIENCE).until(() -> this.redis.calls("busy") == MAX_WORKERS);
		List<CompletableFuture<?>> giveBacks = new ArrayList<>();
		for (int i = 0; i < 36; i++) {
			giveBacks.add(this.runner.evalAsync(keys("give-back"), List.of()));
		}
		assertThat(giveBacks).noneMatch(CompletableFuture::isDone);
		assertThat(this.redis.calls("give-back")).isZero();
		answer.countDown();
		for (CompletableFuture<?> result : busy) {
			assertThat(result).succeedsWithin(PATIENCE);
		}
		for (CompletableFuture<?> result : giveBacks) {
			assertThat(result).succeedsWithin(PATIENCE);
		}
		assertThat(this.redis.calls("give-back")).isEqualTo(giveBacks.size());
	}

	@Test
	void aCallFailsAtOnceOnlyWhenTheQueueIsFull() {
		this.redis.hold("busy");
		for (int i = 0; i < MAX_WORKERS + MAX_QUEUED; i++) {
			assertThat(this.runner.evalAsync(keys("busy"), List.of())).isNotDone();
		}
		assertThatExceptionOfType(RejectedExecutionException.class)
			.isThrownBy(() -> this.runner.eval(keys("over"), List.of(), deadline(GENEROUS)))
			.withMessage("The queue of Redis calls is full (" + MAX_QUEUED + " calls waiting for a worker)");
		assertThat(this.redis.calls("over")).isZero();
	}

	private static long deadline(Duration timeout) {
		return System.nanoTime() + timeout.toNanos();
	}

	private static List<byte[]> keys(String key) {
		return List.of(key.getBytes(StandardCharsets.UTF_8));
	}

	/**
	 * Whether a caller has handed its call to the pool: {@link ScriptRunner#await} is the
	 * only place where a caller parks with a timeout, and it does so only once the call
	 * is queued or running.
	 */
	private static boolean handedOver(Thread caller) {
		Thread.State state = caller.getState();
		return state == Thread.State.TIMED_WAITING || state == Thread.State.TERMINATED;
	}

	/**
	 * A connection factory whose connections run only EVALSHA: each call counts itself by
	 * its first key, and blocks while that key is held; it answers with an empty list.
	 */
	private static final class FakeRedis implements RedisConnectionFactory {

		private final Map<String, CountDownLatch> held = new ConcurrentHashMap<>();

		private final Map<String, AtomicInteger> calls = new ConcurrentHashMap<>();

		private volatile @Nullable CountDownLatch pool;

		private final AtomicInteger waiting = new AtomicInteger();

		private final AtomicInteger closed = new AtomicInteger();

		private final Map<String, AtomicInteger> removals = new ConcurrentHashMap<>();

		/**
		 * Makes every connection wait, as for a pool with none free, until the returned
		 * latch is counted down.
		 */
		CountDownLatch holdConnections() {
			CountDownLatch free = new CountDownLatch(1);
			this.pool = free;
			return free;
		}

		int waitingForConnection() {
			return this.waiting.get();
		}

		/**
		 * Returns how many connections were closed, which the runner does once it is done
		 * with one.
		 */
		int closed() {
			return this.closed.get();
		}

		/**
		 * Holds the calls for a key until the returned latch is counted down.
		 */
		CountDownLatch hold(String key) {
			CountDownLatch answer = new CountDownLatch(1);
			this.held.put(key, answer);
			return answer;
		}

		void answerAll() {
			this.held.values().forEach(CountDownLatch::countDown);
			CountDownLatch free = this.pool;
			if (free != null) {
				free.countDown();
			}
		}

		/**
		 * Returns how many members of a key's sorted set were removed.
		 */
		int removals(String key) {
			AtomicInteger count = this.removals.get(key);
			return (count != null) ? count.get() : 0;
		}

		/**
		 * Returns how many script calls for a key have reached this Redis.
		 */
		int calls(String key) {
			AtomicInteger count = this.calls.get(key);
			return (count != null) ? count.get() : 0;
		}

		@Override
		public RedisConnection getConnection() {
			CountDownLatch free = this.pool;
			if (free != null) {
				this.waiting.incrementAndGet();
				try {
					free.await();
				}
				catch (InterruptedException ex) {
					Thread.currentThread().interrupt();
					throw new IllegalStateException(ex);
				}
				finally {
					this.waiting.decrementAndGet();
				}
			}
			RedisScriptingCommands scripting = proxy(RedisScriptingCommands.class, (method, args) -> {
				if (!method.getName().equals("evalSha")) {
					throw new UnsupportedOperationException(method.getName());
				}
				byte[][] keysAndArgs = (byte[][]) args[3];
				String key = new String(keysAndArgs[0], StandardCharsets.UTF_8);
				this.calls.computeIfAbsent(key, (k) -> new AtomicInteger()).incrementAndGet();
				CountDownLatch answer = this.held.get(key);
				if (answer != null) {
					answer.await();
				}
				return List.of();
			});
			RedisZSetCommands zSets = proxy(RedisZSetCommands.class, (method, args) -> {
				if (!method.getName().equals("zRem")) {
					throw new UnsupportedOperationException(method.getName());
				}
				String key = new String((byte[]) args[0], StandardCharsets.UTF_8);
				this.removals.computeIfAbsent(key, (k) -> new AtomicInteger()).incrementAndGet();
				return 1L;
			});
			return proxy(RedisConnection.class, (method, args) -> switch (method.getName()) {
				case "scriptingCommands" -> scripting;
				case "zSetCommands" -> zSets;
				case "close" -> {
					this.closed.incrementAndGet();
					yield null;
				}
				default -> throw new UnsupportedOperationException(method.getName());
			});
		}

		@Override
		public RedisClusterConnection getClusterConnection() {
			throw new UnsupportedOperationException();
		}

		@Override
		public boolean getConvertPipelineAndTxResults() {
			return false;
		}

		@Override
		public RedisSentinelConnection getSentinelConnection() {
			throw new UnsupportedOperationException();
		}

		@Override
		public @Nullable DataAccessException translateExceptionIfPossible(RuntimeException ex) {
			return null;
		}

		private static <T> T proxy(Class<T> type, Handler handler) {
			InvocationHandler invocationHandler = (proxy, method, args) -> {
				if (method.getDeclaringClass() == Object.class) {
					return switch (method.getName()) {
						case "equals" -> proxy == args[0];
						case "hashCode" -> System.identityHashCode(proxy);
						default -> "Fake " + type.getSimpleName();
					};
				}
				return handler.invoke(method, args);
			};
			return type.cast(Proxy.newProxyInstance(ConnectionScriptRunnerTest.class.getClassLoader(),
					new Class<?>[] { type }, invocationHandler));
		}

		@FunctionalInterface
		private interface Handler {

			@Nullable Object invoke(Method method, @Nullable Object[] args) throws Throwable;

		}

	}

}
