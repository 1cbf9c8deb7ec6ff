package dev.ratelimit.core;

/**
 * Wall-clock start, monotonic progress.
 */
enum SystemTimeSource implements TimeSource {

	INSTANCE;

	private final long originMicros = System.currentTimeMillis() * 1000;

	private final long originNanos = System.nanoTime();

	@Override
	public long nowMicros() {
		return this.originMicros + (System.nanoTime() - this.originNanos) / 1000;
	}

}
