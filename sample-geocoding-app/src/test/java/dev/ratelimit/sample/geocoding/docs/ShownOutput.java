package dev.ratelimit.sample.geocoding.docs;

import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import tools.jackson.databind.json.JsonMapper;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Assertions that what a command printed in the docs is what the sample answers now.
 */
final class ShownOutput {

	private static final JsonMapper json = JsonMapper.builder().build();

	private ShownOutput() {
	}

	/**
	 * Asserts a response as {@code curl -i} (or {@code -D -} filtered by grep) shows it:
	 * the status line, the headers shown (others may be there), and the body if shown.
	 */
	static void response(String shown, HttpResponse<String> response) {
		List<String> lines = List.of(shown.split("\n"));
		assertThat(lines.get(0)).as("status line").startsWith("HTTP/1.1 ");
		assertThat(response.statusCode()).as(lines.get(0)).hasToString(lines.get(0).substring("HTTP/1.1 ".length()));
		int line = 1;
		for (; line < lines.size() && !lines.get(line).isEmpty(); line++) {
			String header = lines.get(line);
			int colon = header.indexOf(": ");
			String name = header.substring(0, colon);
			assertThat(String.join(", ", response.headers().allValues(name))).as(header)
				.isEqualTo(header.substring(colon + 2));
		}
		String body = String.join("\n", lines.subList(Math.min(line + 1, lines.size()), lines.size()));
		if (!body.isBlank()) {
			json(body, response.body());
		}
	}

	/**
	 * Asserts that a JSON text is the JSON shown (the order of an object's members
	 * aside).
	 */
	static void json(String shown, String actual) {
		assertThat(json.readTree(actual)).as(actual).isEqualTo(json.readTree(shown));
	}

	/**
	 * Asserts statuses as {@code sort | uniq -c} counts them.
	 */
	static void statusCounts(String shown, List<?> statuses) {
		Map<String, Long> expected = new TreeMap<>();
		for (String line : shown.strip().split("\n")) {
			String[] count = line.strip().split("\\s+");
			expected.put(count[1], Long.parseLong(count[0]));
		}
		Map<String, Long> actual = new TreeMap<>();
		statuses.forEach((status) -> actual.merge(status.toString(), 1L, Long::sum));
		assertThat(actual).isEqualTo(expected);
	}

	/**
	 * Asserts printed lines.
	 */
	static void lines(String shown, List<String> actual) {
		assertThat(actual).containsExactlyElementsOf(List.of(shown.strip().split("\n")));
	}

	/**
	 * Returns the lines of a text that start with a prefix, as {@code grep '^prefix'}
	 * does.
	 */
	static List<String> grep(String text, String prefix) {
		List<String> matching = new ArrayList<>();
		for (String line : text.split("\n")) {
			if (line.startsWith(prefix)) {
				matching.add(line);
			}
		}
		return matching;
	}

}
