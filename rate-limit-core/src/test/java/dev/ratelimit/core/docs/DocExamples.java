package dev.ratelimit.core.docs;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The examples of the project's docs ({@code README.md} and {@code docs/*.md}), read from
 * the markdown, so that a test runs the text a reader sees and fails when that text
 * changes in a way that breaks it. An example is the fenced code block that follows a
 * marker comment in its file: {@code <!-- example: NAME; runs in: TestClass -->}.
 */
public final class DocExamples {

	private static final Pattern MARKER = Pattern.compile("<!--\\s*example:\\s*([\\w.-]+)\\s*(?:;[^>]*)?-->");

	private static final Pattern FENCE = Pattern.compile("^(`{3,}|~{3,})\\s*[\\w-]*\\s*$");

	private DocExamples() {
	}

	/**
	 * Returns the text of an example: the lines of the fenced block after its marker,
	 * without the fences.
	 * @param file the markdown file, relative to the project's root ({@code README.md},
	 * {@code docs/SAMPLE.md})
	 * @param name the example's name in its marker
	 * @return the block's text, each line ending with {@code \n}
	 */
	public static String block(String file, String name) {
		List<String> lines = lines(file);
		int marker = -1;
		for (int i = 0; i < lines.size(); i++) {
			Matcher matcher = MARKER.matcher(lines.get(i));
			if (matcher.find() && matcher.group(1).equals(name)) {
				if (marker >= 0) {
					throw new IllegalStateException(file + " marks two examples '" + name + "'");
				}
				marker = i;
			}
		}
		if (marker < 0) {
			throw new IllegalStateException(file + " has no example '" + name + "' (<!-- example: " + name + " -->)");
		}
		int open = marker + 1;
		while (open < lines.size() && lines.get(open).isBlank()) {
			open++;
		}
		Matcher fence = (open < lines.size()) ? FENCE.matcher(lines.get(open)) : null;
		if (fence == null || !fence.matches()) {
			throw new IllegalStateException(file + ": the example '" + name
					+ "' is not followed by a fenced code block (line " + (open + 1) + ")");
		}
		StringBuilder text = new StringBuilder();
		for (int i = open + 1; i < lines.size(); i++) {
			if (lines.get(i).strip().equals(fence.group(1))) {
				return text.toString();
			}
			text.append(lines.get(i)).append('\n');
		}
		throw new IllegalStateException(file + ": the code block of the example '" + name + "' is not closed");
	}

	/**
	 * Returns the commands of a console example with what each printed: a command is a
	 * line that starts with {@code $ }, its output the lines up to the next command.
	 * @param file the markdown file, relative to the project's root
	 * @param name the example's name in its marker
	 * @return the commands, in order
	 */
	public static List<ConsoleCommand> console(String file, String name) {
		List<ConsoleCommand> commands = new ArrayList<>();
		String command = null;
		StringBuilder output = new StringBuilder();
		for (String line : block(file, name).split("\n")) {
			if (line.startsWith("$ ")) {
				if (command != null) {
					commands.add(new ConsoleCommand(command, output.toString()));
				}
				command = line.substring(2);
				output.setLength(0);
			}
			else if (command == null) {
				throw new IllegalStateException(file + ": the example '" + name + "' prints before any command");
			}
			else {
				output.append(line).append('\n');
			}
		}
		if (command != null) {
			commands.add(new ConsoleCommand(command, output.toString()));
		}
		return commands;
	}

	/**
	 * Returns the code lines of a Java example, each without its blanks, for comparison
	 * with a test's source: comments, elided bodies ({@code { ... }}) and blank lines are
	 * left out.
	 * @param java the example's text
	 * @return its code lines, without whitespace
	 */
	private static List<String> codeLines(String java) {
		List<String> code = new ArrayList<>();
		for (String line : java.split("\n")) {
			String stripped = withoutBlanks(withoutComment(line).replace("{ ... }", ""));
			if (!stripped.isEmpty()) {
				code.add(stripped);
			}
		}
		return code;
	}

	/**
	 * Returns the code lines of a Java example that a test class does not hold: none if
	 * the test holds the example's code.
	 * @param testClass a class of the module's {@code src/test/java}
	 * @param file the markdown file, relative to the project's root
	 * @param name the example's name in its marker
	 * @return the example's code lines (without whitespace) missing from the class's
	 * source
	 */
	public static List<String> codeMissingFrom(Class<?> testClass, String file, String name) {
		String source = sourceWithoutBlanks(testClass);
		return codeLines(block(file, name)).stream().filter((line) -> !source.contains(line)).toList();
	}

	private static String sourceWithoutBlanks(Class<?> testClass) {
		Class<?> top = testClass;
		while (top.getEnclosingClass() != null) {
			top = top.getEnclosingClass();
		}
		Path source = Path.of("src", "test", "java", top.getName().replace('.', '/') + ".java");
		return withoutBlanks(read(source));
	}

	/**
	 * Returns a file of the project.
	 * @param relative the file, relative to the project's root
	 * @return the file
	 */
	public static Path projectFile(String relative) {
		// tests run in their module's directory; the root is the one with the docs
		for (Path dir = Path.of("").toAbsolutePath(); dir != null; dir = dir.getParent()) {
			if (Files.isRegularFile(dir.resolve("README.md")) && Files.isDirectory(dir.resolve("docs"))) {
				return dir.resolve(relative);
			}
		}
		throw new IllegalStateException(
				"No project root (README.md and docs/) at or above " + Path.of("").toAbsolutePath());
	}

	private static List<String> lines(String file) {
		return List.of(read(projectFile(file)).split("\n", -1));
	}

	private static String read(Path path) {
		try {
			return Files.readString(path, StandardCharsets.UTF_8).replace("\r\n", "\n");
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

	private static String withoutComment(String line) {
		int quotes = 0;
		for (int i = 0; i < line.length() - 1; i++) {
			char c = line.charAt(i);
			if (c == '"' && (i == 0 || line.charAt(i - 1) != '\\')) {
				quotes++;
			}
			else if (c == '/' && line.charAt(i + 1) == '/' && quotes % 2 == 0) {
				return line.substring(0, i);
			}
		}
		return line;
	}

	private static String withoutBlanks(String text) {
		return text.replaceAll("\\s+", "");
	}

	/**
	 * A command of a console example and what it printed.
	 *
	 * @param command the command, without the {@code $ } prompt
	 * @param output the lines it printed, each ending with {@code \n}
	 */
	public record ConsoleCommand(String command, String output) {

		/**
		 * Returns the printed lines.
		 * @return the lines, without their line ends
		 */
		public List<String> outputLines() {
			return this.output.isEmpty() ? List.of() : List.of(this.output.split("\n"));
		}

	}

}
