package dev.ratelimit.example.quotes.docs;

import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import tools.jackson.databind.json.JsonMapper;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Assertions that what a command printed in the docs is what the example app answers now.
 */
final class ShownOutput {

	private static final JsonMapper json = JsonMapper.builder().build();

	private ShownOutput() {
	}

	/**
	 * Asserts a response as {@code curl -i} (or {@code -D -}) filtered by {@code grep}
	 * shows it: the status line ({@code HTTP/1.1 429 Too Many Requests}, of which the
	 * code is checked), the headers shown (others may be there, Spring Security's among
	 * them), and the JSON body if a line shows one.
	 */
	static void response(String shown, HttpResponse<String> response) {
		List<String> lines = List.of(shown.strip().split("\n"));
		String statusLine = lines.get(0);
		assertThat(statusLine).as("status line").startsWith("HTTP/1.1 ");
		assertThat(String.valueOf(response.statusCode())).as(statusLine).isEqualTo(statusLine.split(" ")[1]);
		for (String line : lines.subList(1, lines.size())) {
			if (line.startsWith("{") || line.startsWith("[")) {
				json(line, response.body());
				continue;
			}
			int colon = line.indexOf(": ");
			String name = line.substring(0, colon);
			assertThat(String.join(", ", response.headers().allValues(name))).as(line)
				.isEqualTo(line.substring(colon + 2));
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
