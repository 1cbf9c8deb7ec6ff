package dev.ratelimit.core.redis;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Tests for {@link ScriptOperation}.
 */
class ScriptOperationTest {

	private static final Pattern LISTED_OPERATION = Pattern.compile("^--\\s+'(\\w+)' ");

	@Test
	void hasTheOperationsTheScriptsHeaderLists() throws IOException {
		List<String> listed = new ArrayList<>();
		boolean inOperations = false;
		for (String line : header()) {
			if (line.startsWith("-- ARGV[1] op")) {
				inOperations = true;
			}
			else if (line.startsWith("-- ARGV[")) {
				inOperations = false;
			}
			else if (inOperations) {
				Matcher matcher = LISTED_OPERATION.matcher(line);
				if (matcher.find()) {
					listed.add(matcher.group(1));
				}
			}
		}
		assertThat(listed)
			.containsExactly(Arrays.stream(ScriptOperation.values()).map(ScriptOperation::code).toArray(String[]::new));
	}

	private static List<String> header() throws IOException {
		try (InputStream in = ScriptOperationTest.class.getResourceAsStream("decide.lua")) {
			assertThat(in).as("decide.lua next to the script's classes").isNotNull();
			List<String> header = new ArrayList<>();
			for (String line : new String(in.readAllBytes(), StandardCharsets.UTF_8).split("\n")) {
				if (!line.startsWith("--")) {
					break;
				}
				header.add(line);
			}
			return header;
		}
	}

}
