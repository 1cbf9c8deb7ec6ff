package dev.ratelimit.core.redis.testing;

import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.Locale;

/**
 * Finds a {@code redis-server} binary: the one named by the system property
 * {@code ratelimit.test.redis-server} (a path, or {@code embedded} to force the bundled
 * one), else {@code redis-server} on the {@code PATH}, else the binary bundled in the
 * {@code com.github.codemonstur:embedded-redis} test dependency, extracted once to a
 * temporary file.
 */
public final class RedisExecutable {

	/** The system property that overrides the binary. */
	public static final String PROPERTY = "ratelimit.test.redis-server";

	private static Path located;

	private RedisExecutable() {
	}

	/**
	 * Returns the binary to run.
	 * @return the path of an executable {@code redis-server}
	 */
	public static synchronized Path locate() {
		if (located == null) {
			located = find();
		}
		return located;
	}

	private static Path find() {
		String configured = System.getProperty(PROPERTY, "");
		if (configured.equals("embedded")) {
			return extractEmbedded();
		}
		if (!configured.isEmpty()) {
			return Path.of(configured);
		}
		String path = System.getenv("PATH");
		if (path != null) {
			for (String directory : path.split(File.pathSeparator)) {
				Path candidate = Path.of(directory, "redis-server");
				if (Files.isExecutable(candidate)) {
					return candidate;
				}
			}
		}
		return extractEmbedded();
	}

	/**
	 * The binaries at the root of embedded-redis 1.4.3, by platform.
	 */
	private static String embeddedResource() {
		String os = System.getProperty("os.name").toLowerCase(Locale.ROOT);
		String arch = System.getProperty("os.arch").toLowerCase(Locale.ROOT);
		boolean arm = arch.contains("aarch64") || arch.contains("arm");
		if (os.contains("linux")) {
			if (arm) {
				return "redis-server-6.2.7-linux-arm64";
			}
			return (arch.contains("64")) ? "redis-server-6.2.6-v5-linux-amd64" : "redis-server-6.2.7-linux-386";
		}
		if (os.contains("mac") || os.contains("darwin")) {
			return arm ? "redis-server-6.2.6-v5-darwin-arm64" : "redis-server-6.2.6-v5-darwin-amd64";
		}
		if (os.contains("windows")) {
			return "redis-server-5.0.14.1-windows-amd64.exe";
		}
		throw new IllegalStateException("No redis-server on the PATH and no embedded binary for " + os + "/" + arch
				+ "; set RATELIMIT_TEST_REDIS or -D" + PROPERTY);
	}

	private static Path extractEmbedded() {
		String resource = embeddedResource();
		try (InputStream binary = RedisExecutable.class.getClassLoader().getResourceAsStream(resource)) {
			if (binary == null) {
				throw new IllegalStateException("The embedded-redis test dependency does not contain " + resource);
			}
			Path target = Files.createTempFile("ratelimit-redis-server-", resource.endsWith(".exe") ? ".exe" : "");
			Files.copy(binary, target, StandardCopyOption.REPLACE_EXISTING);
			target.toFile().setExecutable(true);
			target.toFile().deleteOnExit();
			return target;
		}
		catch (IOException ex) {
			throw new UncheckedIOException("Cannot extract " + resource, ex);
		}
	}

}
