package dev.ratelimit.sample.geocoding.docs;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;

import org.jspecify.annotations.Nullable;

/**
 * The requests of the docs' curl commands, sent over real HTTP to a running sample app:
 * as an API client (with an {@code X-API-Key}, or anonymous) or as the operator.
 */
final class SampleClient {

	private static final String OPERATOR = "Basic "
			+ Base64.getEncoder().encodeToString("operator:change-me".getBytes(StandardCharsets.UTF_8));

	private final HttpClient client = HttpClient.newHttpClient();

	private final int port;

	SampleClient(int port) {
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

	HttpResponse<String> post(String path, String apiKey, String json) {
		return send(request(path).header("X-API-Key", apiKey)
			.header("Content-Type", "application/json")
			.POST(HttpRequest.BodyPublishers.ofString(json)));
	}

	HttpResponse<String> delete(String path) {
		return send(request(path).DELETE());
	}

	HttpResponse<String> asOperator(String method, String path) {
		return send(
				request(path).header("Authorization", OPERATOR).method(method, HttpRequest.BodyPublishers.noBody()));
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

}
