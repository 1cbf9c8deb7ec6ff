package dev.ratelimit.benchmarks.reliability;

import java.nio.file.Path;
import java.time.Duration;

/**
 * Where the campaign runs and how long: a quick run (for checking, well under ten minutes
 * in all) or a full one.
 *
 * @param root the project's root directory
 * @param quick whether this is a quick run
 * @param results the directory of the results files
 */
record Settings(Path root, boolean quick, Path results) {

	/** The sample app's jar, as {@code reliability.sh} builds it. */
	Path appJar() {
		return this.root.resolve("sample-geocoding-app/target/sample-geocoding-app-0.1.0-SNAPSHOT.jar");
	}

	/** Picks the quick or the full value of a setting. */
	<T> T pick(T quick, T full) {
		return this.quick ? quick : full;
	}

	Duration seconds(long quick, long full) {
		return Duration.ofSeconds(this.quick ? quick : full);
	}

}
