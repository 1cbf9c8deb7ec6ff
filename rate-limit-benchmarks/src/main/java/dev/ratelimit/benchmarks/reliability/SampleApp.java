package dev.ratelimit.benchmarks.reliability;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import dev.ratelimit.core.redis.testing.RedisServer;

/**
 * An instance of the sample app, started from its jar with the {@code redis} profile on a
 * free port, with the campaign's settings as command-line properties: the {@code api}
 * policy keyed by the {@value #CLIENT_HEADER} header with one limit for every client
 * ({@link #LIMIT}), the only policy on {@code /api/**}; the failure mode and
 * {@code redis.timeout} of the scenario; Tomcat's access log (client, status, time), from
 * which the campaign counts each client's admissions.
 */
final class SampleApp implements AutoCloseable {

	static final String CLIENT_HEADER = "X-Client";

	/**
	 * The limit of every client: 6/1m, a token bucket of capacity 6, the {@code api}
	 * policy's anonymous tier.
	 */
	static final TokenBucketBound LIMIT = new TokenBucketBound(6, 6, Duration.ofMinutes(1));

	/**
	 * The request every client sends: a reverse geocoding look-up, which answers in well
	 * under a millisecond.
	 */
	static final String PATH = "/api/reverse?lat=34&lon=-6";

	private static final Duration START_TIMEOUT = Duration.ofSeconds(240);

	private static final HttpClient HTTP = HttpClient.newBuilder()
		.version(HttpClient.Version.HTTP_1_1)
		.connectTimeout(Duration.ofSeconds(2))
		.build();

	private final String name;

	private final Process process;

	private final int port;

	private final Path accessLog;

	private final String failureMode;

	private SampleApp(String name, Process process, int port, Path accessLog, String failureMode) {
		this.name = name;
		this.process = process;
		this.port = port;
		this.accessLog = accessLog;
		this.failureMode = failureMode;
	}

	static Builder builder(Path jar, String name) {
		return new Builder(jar, name);
	}

	String name() {
		return this.name;
	}

	long pid() {
		return this.process.pid();
	}

	int port() {
		return this.port;
	}

	String failureMode() {
		return this.failureMode;
	}

	String url(String path) {
		return "http://127.0.0.1:" + this.port + path;
	}

	/** The directory of its access log. */
	Path accessLog() {
		return this.accessLog;
	}

	/**
	 * The sample's operator (its application.yml), whom the per-client reads of the
	 * {@code ratelimits} endpoint need.
	 */
	private static final String OPERATOR = "Basic "
			+ Base64.getEncoder().encodeToString("operator:change-me".getBytes(StandardCharsets.UTF_8));

	/**
	 * Answers a GET to the app, such as {@code /actuator/prometheus}, as the sample's
	 * operator.
	 * @throws IllegalStateException for a status other than 200, or no answer within 30 s
	 */
	String get(String path) {
		try {
			HttpResponse<String> response = HTTP.send(HttpRequest.newBuilder(URI.create(url(path)))
				.timeout(Duration.ofSeconds(30))
				.header("Authorization", OPERATOR)
				.GET()
				.build(), HttpResponse.BodyHandlers.ofString());
			if (response.statusCode() != 200) {
				throw new IllegalStateException(
						"GET " + path + " answered " + response.statusCode() + ": " + response.body());
			}
			return response.body();
		}
		catch (IOException ex) {
			throw new IllegalStateException("GET " + path + " of " + this.name + " failed: " + ex, ex);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException("Interrupted", ex);
		}
	}

	/**
	 * Sends one request of a client and returns its status.
	 */
	int request(String client) {
		try {
			return HTTP
				.send(HttpRequest.newBuilder(URI.create(url(PATH)))
					.timeout(Duration.ofSeconds(10))
					.header(CLIENT_HEADER, client)
					.GET()
					.build(), HttpResponse.BodyHandlers.discarding())
				.statusCode();
		}
		catch (IOException ex) {
			return -1;
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException("Interrupted", ex);
		}
	}

	AppMetrics metrics() {
		return AppMetrics.parse(get("/actuator/prometheus"));
	}

	boolean isAlive() {
		return this.process.isAlive();
	}

	@Override
	public void close() {
		Processes.stop(this.process);
	}

	@Override
	public String toString() {
		return "sample app " + this.name + " on port " + this.port;
	}

	/**
	 * The settings of an instance.
	 */
	static final class Builder {

		private final Path jar;

		private final String name;

		private final Map<String, String> properties = new LinkedHashMap<>();

		private String heap = "512m";

		private Duration timeout = Duration.ofMillis(100);

		private String failureMode = "local";

		private Builder(Path jar, String name) {
			this.jar = jar;
			this.name = name;
		}

		/** {@code ratelimit.on-backend-failure}: allow, deny or local. */
		Builder failureMode(String mode) {
			this.failureMode = mode;
			return this;
		}

		/** {@code ratelimit.redis.timeout}. */
		Builder timeout(Duration timeout) {
			this.timeout = timeout;
			return this;
		}

		/** A standalone Redis (or a proxy in front of one) on this machine. */
		Builder redis(int port) {
			this.properties.put("spring.data.redis.host", "127.0.0.1");
			this.properties.put("spring.data.redis.port", Integer.toString(port));
			return this;
		}

		Builder redis(RedisServer server) {
			return redis(server.port());
		}

		/** A master found through Sentinel. */
		Builder sentinel(String master, Collection<String> nodes) {
			this.properties.put("spring.data.redis.sentinel.master", master);
			this.properties.put("spring.data.redis.sentinel.nodes", String.join(",", nodes));
			return this;
		}

		/** A Redis Cluster. */
		Builder cluster(Collection<String> nodes) {
			this.properties.put("spring.data.redis.cluster.nodes", String.join(",", nodes));
			return this;
		}

		/** {@code -Xms} and {@code -Xmx}, such as {@code 512m}. */
		Builder heap(String heap) {
			this.heap = heap;
			return this;
		}

		/** Any other property, such as {@code ratelimit.policies.inflight.key}. */
		Builder property(String key, String value) {
			this.properties.put(key, value);
			return this;
		}

		/**
		 * Starts the instance and returns once it answers.
		 * @throws IllegalStateException if it exits or does not answer within four
		 * minutes
		 */
		SampleApp start(Processes processes) {
			int port = RedisServer.freePort();
			Path accessLog = processes.logDirectory().resolve(this.name + "-access");
			Map<String, String> all = new LinkedHashMap<>();
			all.put("server.port", Integer.toString(port));
			all.put("spring.profiles.active", "redis");
			all.put("ratelimit.on-backend-failure", this.failureMode);
			all.put("ratelimit.redis.timeout", this.timeout.toMillis() + "ms");
			all.put("ratelimit.policies.api.key", "header:" + CLIENT_HEADER);
			all.put("ratelimit.policies.api.tiers.anonymous[0].rate", "6/1m");
			// only the api policy applies to the campaign's requests: the sample's global
			// limit would reject most
			all.put("ratelimit.filters[0].patterns", "/api/**");
			all.put("ratelimit.filters[0].policies", "api");
			all.put("server.tomcat.accesslog.enabled", "true");
			all.put("server.tomcat.accesslog.directory", accessLog.toString());
			all.put("server.tomcat.accesslog.pattern", "%{" + CLIENT_HEADER + "}i %s %{begin:msec}t %D");
			// the access log is flushed by Tomcat's background thread: once a second
			// instead of every ten
			all.put("server.tomcat.background-processor-delay", "1s");
			all.put("server.tomcat.mbeanregistry.enabled", "true");
			all.put("logging.level.root", "WARN");
			all.putAll(this.properties);
			List<String> command = new ArrayList<>(
					List.of("java", "-Xms" + this.heap, "-Xmx" + this.heap, "-jar", this.jar.toString()));
			all.forEach((key, value) -> command.add("--" + key + "=" + value));
			Process process = processes.start("app-" + this.name, command);
			SampleApp app = new SampleApp(this.name, process, port, accessLog, this.failureMode);
			awaitReady(app, processes.logDirectory().resolve("app-" + this.name + ".log"));
			return app;
		}

		private static void awaitReady(SampleApp app, Path log) {
			long deadline = System.nanoTime() + START_TIMEOUT.toNanos();
			while (System.nanoTime() < deadline) {
				if (!app.isAlive()) {
					throw new IllegalStateException(app + " exited at start-up; see " + log + ":\n" + tail(log));
				}
				try {
					// the metrics scrape does not touch Redis (a health check would run
					// the decision script)
					app.get("/actuator/prometheus");
					return;
				}
				catch (IllegalStateException ex) {
					Pause.millis(250);
				}
			}
			app.close();
			throw new IllegalStateException(app + " did not answer within " + START_TIMEOUT + "; see " + log);
		}

		private static String tail(Path log) {
			try {
				List<String> lines = Files.readAllLines(log);
				return String.join("\n", lines.subList(Math.max(0, lines.size() - 30), lines.size()));
			}
			catch (IOException ex) {
				return "";
			}
		}

	}

}
