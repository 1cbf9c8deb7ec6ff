package dev.ratelimit.benchmarks.reliability;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * Issue 32's findings (how real applications fail, deploy and authenticate), reproduced
 * over HTTP against the sample (servlet, Tomcat) and the reactive example (WebFlux,
 * Netty), each started from its jar as built before issue 32 ({@value #BEFORE_COMMIT})
 * and at this commit, with the same command line. Every figure is recorded twice, as
 * {@code before.<measure>} and {@code after.<measure>} of its case; only the "after" ones
 * have targets.
 */
final class AppIntegration implements Scenario {

	/** The last commit before issue 32's fixes, whose jars give the "before" figures. */
	static final String BEFORE_COMMIT = "5f1fba7";

	/** Where {@code reliability.sh} builds the jars of {@link #BEFORE_COMMIT}. */
	static final String BEFORE_DIRECTORY = "rate-limit-benchmarks/target/before-" + BEFORE_COMMIT;

	static final String SAMPLE_JAR = "sample-geocoding-app/target/sample-geocoding-app-0.1.0-SNAPSHOT.jar";

	static final String REACTIVE_JAR = "reactive-example-app/target/reactive-example-app-0.1.0-SNAPSHOT.jar";

	static final String CORE_JAR = "rate-limit-core/target/rate-limit-core-0.1.0-SNAPSHOT.jar";

	@Override
	public void run(Settings settings, Processes processes, Figures figures) {
		List<Version> versions = versions(settings, figures);
		figures.note("Each case runs once against the jars of " + BEFORE_COMMIT + " (before issue 32, built by "
				+ "reliability.sh in " + BEFORE_DIRECTORY + ") and once against this commit's (after), one instance "
				+ "at a time, each with the same command-line properties: the cases' own policies and filter rules "
				+ "(a filter list given on the command line replaces the application's), "
				+ "`ratelimit.client.trusted-proxies=127.0.0.1/32` where a case sends `X-Forwarded-For` as a proxy "
				+ "would (each case from addresses of its own, so that no case spends another's limits), and "
				+ "the in-memory backend unless a case names Redis. Targets apply to the \"after\" figures.");
		Recorder recorder = new Recorder(figures);
		List<Cases> all = List.of(new SampleIntegration(settings), new ReactiveIntegration(settings),
				new PlatformIntegration(), new RedisIntegration(settings), new CoreIntegration(settings));
		for (Cases cases : all) {
			cases.describe(recorder);
			for (Version version : versions) {
				try {
					cases.run(version, processes, recorder);
				}
				catch (RuntimeException ex) {
					ex.printStackTrace();
					figures.note(cases.getClass().getSimpleName() + " against " + version.label() + " ("
							+ version.commit() + ") did not complete: " + ex);
				}
			}
		}
	}

	private static List<Version> versions(Settings settings, Figures figures) {
		List<Version> versions = new ArrayList<>();
		Version before = new Version("before", BEFORE_COMMIT, settings.root().resolve(BEFORE_DIRECTORY));
		if (Files.exists(before.sampleJar()) && Files.exists(before.reactiveJar()) && Files.exists(before.coreJar())) {
			versions.add(before);
		}
		else {
			figures.note("The jars of " + BEFORE_COMMIT + " are not built (" + before.sampleJar() + "): "
					+ "\"after\" figures only. reliability.sh builds them.");
		}
		versions.add(new Version("after", "this commit", settings.root()));
		return versions;
	}

	static long count(List<Integer> statuses, int status) {
		return statuses.stream().filter((answer) -> answer == status).count();
	}

	/**
	 * The applications as built at one commit.
	 *
	 * @param label {@code before} or {@code after}, the prefix of its measures
	 * @param commit the commit, as the notes name it
	 * @param root the root of the tree the jars were built in
	 */
	record Version(String label, String commit, Path root) {

		boolean after() {
			return this.label.equals("after");
		}

		Path sampleJar() {
			return this.root.resolve(SAMPLE_JAR);
		}

		Path reactiveJar() {
			return this.root.resolve(REACTIVE_JAR);
		}

		Path coreJar() {
			return this.root.resolve(CORE_JAR);
		}

		IntegrationApp.Builder sample(String name) {
			return IntegrationApp.builder(sampleJar(), this.label + "-" + name);
		}

		IntegrationApp.Builder reactive(String name) {
			return IntegrationApp.builder(reactiveJar(), this.label + "-" + name);
		}

	}

	/**
	 * Records the figures of one version: {@code <version>.<measure>} of a case, with the
	 * target only for the version after.
	 *
	 * @param figures the scenario's figures
	 */
	record Recorder(Figures figures) {

		void add(Version version, String row, String measure, double value, Target target) {
			this.figures.add(row, version.label() + "." + measure, value, version.after() ? target : Target.NONE);
		}

		void add(Version version, String row, String measure, double value) {
			add(version, row, measure, value, Target.NONE);
		}

		/** A value that is not a number, such as {@code no start}. */
		void text(Version version, String row, String measure, String value) {
			this.figures.add(row, version.label() + "." + measure, value, Target.NONE, Target.Verdict.NONE);
		}

		void note(String text) {
			this.figures.note(text);
		}

	}

	/**
	 * The cases that share an instance of an application (or a server it needs).
	 */
	interface Cases {

		/** Notes what the cases do, once. */
		void describe(Recorder recorder);

		void run(Version version, Processes processes, Recorder recorder);

	}

}
