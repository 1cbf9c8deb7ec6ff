package dev.ratelimit.spring;

import java.time.Duration;

/**
 * Waits out the delay of a shaping leaky bucket before a call proceeds. A bean of this
 * type replaces the default, which sleeps the calling thread; tests supply one that
 * advances a fake clock instead.
 */
@FunctionalInterface
public interface Sleeper {

	/**
	 * Waits for the given time.
	 * @param delay the delay, positive
	 * @throws InterruptedException if the thread is interrupted while waiting
	 */
	void sleep(Duration delay) throws InterruptedException;

	/**
	 * Returns the sleeper that blocks the calling thread.
	 * @return a sleeper backed by {@link Thread#sleep(long, int)}
	 */
	static Sleeper threadSleep() {
		return (delay) -> Thread.sleep(delay.toMillis(), delay.toNanosPart() % 1_000_000);
	}

}
