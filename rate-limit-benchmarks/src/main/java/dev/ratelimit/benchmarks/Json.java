package dev.ratelimit.benchmarks;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Just enough of a JSON reader for JMH's result files and the small result files of the
 * other measurements: objects become maps, arrays lists, numbers doubles.
 */
final class Json {

	private final String text;

	private int at;

	private Json(String text) {
		this.text = text;
	}

	static Object parse(String text) {
		Json json = new Json(text);
		Object value = json.value();
		json.skipSpace();
		if (json.at != text.length()) {
			throw json.error("trailing text");
		}
		return value;
	}

	private Object value() {
		skipSpace();
		if (this.at >= this.text.length()) {
			throw error("unexpected end");
		}
		char c = this.text.charAt(this.at);
		return switch (c) {
			case '{' -> object();
			case '[' -> array();
			case '"' -> string();
			case 't' -> literal("true", Boolean.TRUE);
			case 'f' -> literal("false", Boolean.FALSE);
			case 'n' -> literal("null", null);
			default -> number();
		};
	}

	private Map<String, Object> object() {
		Map<String, Object> object = new LinkedHashMap<>();
		this.at++;
		skipSpace();
		if (peek() == '}') {
			this.at++;
			return object;
		}
		while (true) {
			skipSpace();
			String name = string();
			skipSpace();
			expect(':');
			object.put(name, value());
			skipSpace();
			if (peek() == ',') {
				this.at++;
				continue;
			}
			expect('}');
			return object;
		}
	}

	private List<Object> array() {
		List<Object> array = new ArrayList<>();
		this.at++;
		skipSpace();
		if (peek() == ']') {
			this.at++;
			return array;
		}
		while (true) {
			array.add(value());
			skipSpace();
			if (peek() == ',') {
				this.at++;
				continue;
			}
			expect(']');
			return array;
		}
	}

	private String string() {
		expect('"');
		StringBuilder out = new StringBuilder();
		while (true) {
			char c = this.text.charAt(this.at++);
			if (c == '"') {
				return out.toString();
			}
			if (c != '\\') {
				out.append(c);
				continue;
			}
			char escaped = this.text.charAt(this.at++);
			switch (escaped) {
				case 'n' -> out.append('\n');
				case 't' -> out.append('\t');
				case 'r' -> out.append('\r');
				case 'b' -> out.append('\b');
				case 'f' -> out.append('\f');
				case 'u' -> {
					out.append((char) Integer.parseInt(this.text.substring(this.at, this.at + 4), 16));
					this.at += 4;
				}
				default -> out.append(escaped);
			}
		}
	}

	private Object literal(String word, Object value) {
		if (!this.text.startsWith(word, this.at)) {
			throw error("expected " + word);
		}
		this.at += word.length();
		return value;
	}

	private Double number() {
		int start = this.at;
		while (this.at < this.text.length() && "+-0123456789.eE".indexOf(this.text.charAt(this.at)) >= 0) {
			this.at++;
		}
		if (start == this.at) {
			throw error("unexpected character");
		}
		return Double.valueOf(this.text.substring(start, this.at));
	}

	private char peek() {
		return (this.at < this.text.length()) ? this.text.charAt(this.at) : '\0';
	}

	private void expect(char c) {
		if (peek() != c) {
			throw error("expected '" + c + "'");
		}
		this.at++;
	}

	private void skipSpace() {
		while (this.at < this.text.length() && Character.isWhitespace(this.text.charAt(this.at))) {
			this.at++;
		}
	}

	private IllegalArgumentException error(String what) {
		return new IllegalArgumentException("Invalid JSON at offset " + this.at + ": " + what);
	}

	/**
	 * Returns a number that JMH may have written as a string ({@code "NaN"}).
	 */
	static double number(Object value) {
		if (value instanceof Double number) {
			return number;
		}
		if (value instanceof String text) {
			return Double.parseDouble(text);
		}
		return Double.NaN;
	}

}
