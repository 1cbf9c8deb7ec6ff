package dev.ratelimit.example.quotes.docs;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.stream.Stream;

import org.jspecify.annotations.Nullable;

/**
 * The requests of the docs' curl commands, sent over real HTTP/1.1 to a running example
 * app: as an API client (with an {@code X-API-Key}, or anonymous) or as the operator; and
 * streams of ticks, read line by line as {@code curl -N} prints them.
 */
final class QuotesClient {

	private static final String OPERATOR = "Basic "
			+ Base64.getEncoder().encodeToString("operator:change-me".getBytes(StandardCharsets.UTF_8));

	private final HttpClient client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

	private final int port;

	QuotesClient(int port) {
		this.port = port;
	}

	HttpResponse<String> get(String path) {
		return send(request(path).GET());
	}

	HttpResponse<String> get(String path, String apiKey) {
		return send(request(path).header("X-API-Key", apiKey).GET());
	}

	/**
	 * Sends the same request a number of times, one after the other.
	 * @return the statuses, in order
	 */
	List<Integer> statuses(int times, String path, @Nullable String apiKey) {
		List<Integer> statuses = new ArrayList<>();
		for (int i = 0; i < times; i++) {
			statuses.add(((apiKey != null) ? get(path, apiKey) : get(path)).statusCode());
		}
		return statuses;
	}

	HttpResponse<String> asOperator(String path) {
		return asOperator("GET", path);
	}

	HttpResponse<String> asOperator(String method, String path) {
		return send(
				request(path).header("Authorization", OPERATOR).method(method, HttpRequest.BodyPublishers.noBody()));
	}

	/**
	 * Opens a stream of Server-Sent Events: returns once its status and headers have
	 * arrived, its body still open.
	 */
	OpenStream open(String path, String apiKey) {
		HttpRequest request = request(path).header("X-API-Key", apiKey).GET().build();
		try {
			HttpResponse<Stream<String>> response = this.client.sendAsync(request, HttpResponse.BodyHandlers.ofLines())
				.get(10, TimeUnit.SECONDS);
			return new OpenStream(response);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException(ex);
		}
		catch (ExecutionException | TimeoutException ex) {
			throw new IllegalStateException("No answer from " + path, ex);
		}
	}

	private HttpRequest.Builder request(String path) {
		return HttpRequest.newBuilder(URI.create("http://localhost:" + this.port + path));
	}

	private HttpResponse<String> send(HttpRequest.Builder request) {
		try {
			return this.client.send(request.build(), HttpResponse.BodyHandlers.ofString());
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException(ex);
		}
	}

	/**
	 * A response whose body is still being read, as a client that keeps its connection
	 * open.
	 */
	static final class OpenStream implements AutoCloseable {

		private final HttpResponse<Stream<String>> response;

		private final Iterator<String> lines;

		private OpenStream(HttpResponse<Stream<String>> response) {
			this.response = response;
			this.lines = response.body().iterator();
		}

		int status() {
			return this.response.statusCode();
		}

		/**
		 * Reads the next lines of the body, waiting for them as they come.
		 */
		List<String> lines(int count) {
			List<String> read = new ArrayList<>(count);
			while (read.size() < count && this.lines.hasNext()) {
				read.add(this.lines.next());
			}
			return read;
		}

		/**
		 * Closes the connection, as a client that goes away.
		 */
		@Override
		public void close() {
			this.response.body().close();
		}

	}

}
