package dev.ratelimit.core.redis;

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
	void hasTheOperationsTheScriptsHeaderLists() {
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

	/** The comment lines that open the assembled script: its prelude's header. */
	private static List<String> header() {
		List<String> header = new ArrayList<>();
		for (String line : DecideScript.assemble().split("\n")) {
			if (!line.startsWith("--")) {
				break;
			}
			header.add(line);
		}
		return header;
	}

}
