package dev.ratelimit.spring.web;

import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.Map;

import org.jspecify.annotations.Nullable;

import org.springframework.http.ProblemDetail;

/**
 * Writes a {@link ProblemDetail} as RFC 9457 JSON without a JSON library: for the rare
 * servlet application where the MVC exception resolvers are not there to render it, and
 * for the reactive filter, which answers before any handler runs.
 */
public final class ProblemJson {

	private ProblemJson() {
	}

	/**
	 * Returns a problem as JSON: its standard members, then its properties.
	 * @param problem the problem
	 * @return the JSON text
	 */
	public static String write(ProblemDetail problem) {
		Map<String, @Nullable Object> members = new LinkedHashMap<>();
		members.put("type", (problem.getType() != null) ? problem.getType().toString() : null);
		members.put("title", problem.getTitle());
		members.put("status", problem.getStatus());
		members.put("detail", problem.getDetail());
		members.put("instance", (problem.getInstance() != null) ? problem.getInstance().toString() : null);
		if (problem.getProperties() != null) {
			members.putAll(problem.getProperties());
		}
		StringBuilder json = new StringBuilder("{");
		members.forEach((name, value) -> {
			if (value != null) {
				if (json.length() > 1) {
					json.append(',');
				}
				string(json, name);
				json.append(':');
				value(json, value);
			}
		});
		return json.append('}').toString();
	}

	private static void value(StringBuilder json, Object value) {
		if (value instanceof Number || value instanceof Boolean) {
			json.append(value);
		}
		else if (value instanceof Collection<?> collection) {
			json.append('[');
			boolean first = true;
			for (Object element : collection) {
				if (!first) {
					json.append(',');
				}
				first = false;
				if (element == null) {
					json.append("null");
				}
				else {
					value(json, element);
				}
			}
			json.append(']');
		}
		else {
			string(json, value.toString());
		}
	}

	private static void string(StringBuilder json, String text) {
		json.append('"');
		for (int i = 0; i < text.length(); i++) {
			char c = text.charAt(i);
			switch (c) {
				case '"' -> json.append("\\\"");
				case '\\' -> json.append("\\\\");
				case '\n' -> json.append("\\n");
				case '\r' -> json.append("\\r");
				case '\t' -> json.append("\\t");
				default -> {
					if (c < 0x20) {
						json.append(String.format("\\u%04x", (int) c));
					}
					else {
						json.append(c);
					}
				}
			}
		}
		json.append('"');
	}

}
