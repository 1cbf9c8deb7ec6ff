package dev.ratelimit.benchmarks.reliability;

/**
 * One scenario of the campaign: it starts what it needs through {@link Processes} and
 * records its figures.
 */
interface Scenario {

	void run(Settings settings, Processes processes, Figures figures) throws Exception;

}
