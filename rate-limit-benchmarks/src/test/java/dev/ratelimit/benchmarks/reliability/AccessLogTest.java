package dev.ratelimit.benchmarks.reliability;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Admissions per client, read from the access logs of a fleet.
 */
class AccessLogTest {

	@TempDir
	Path directory;

	@Test
	void countsEachClientsAdmissionsOverEveryInstanceOfTheFleet() throws IOException {
		Path first = log("a", "s1-0 200 1000 150", "s1-0 429 1001 90", "s1-1 200 1002 80", "- 200 1003 10",
				"garbled line");
		Path second = log("b", "s1-0 200 1004 120", "s2-0 200 1005 100", "s1-0 503 1006 100");
		AccessLog log = AccessLog.read(List.of(first, second, this.directory.resolve("absent")));
		assertThat(log.size()).isEqualTo(7);
		assertThat(log.admitted((client) -> client.startsWith("s1-"))).containsOnly(Map.entry("s1-0", 2L),
				Map.entry("s1-1", 1L));
		assertThat(log.clients((client) -> client.startsWith("s1-"))).isEqualTo(2);
	}

	@Test
	void countsAClientsAdmissionsWithinAnInterval() throws IOException {
		AccessLog log = AccessLog.read(log("a", "c 200 1000 1", "c 200 2000 1", "c 429 2500 1", "c 200 3000 1"));
		assertThat(log.admitted("c", 1000, 3000)).isEqualTo(2);
		assertThat(log.admitted("c", 1001, 3001)).isEqualTo(2);
		assertThat(log.admitted("other", 0, 5000)).isZero();
	}

	private Path log(String instance, String... lines) throws IOException {
		Path directory = Files.createDirectories(this.directory.resolve(instance));
		Files.write(directory.resolve("access_log.2026-01-01.log"), List.of(lines));
		return directory;
	}

}
