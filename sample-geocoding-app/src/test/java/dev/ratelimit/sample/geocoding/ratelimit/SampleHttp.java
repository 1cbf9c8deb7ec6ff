package dev.ratelimit.sample.geocoding.ratelimit;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;

import org.jspecify.annotations.Nullable;

/**
 * Real HTTP calls to a running sample app.
 */
final class SampleHttp {

	private final HttpClient client = HttpClient.newHttpClient();

	private final int port;

	SampleHttp(int port) {
		this.port = port;
	}

	HttpResponse<String> get(String path, @Nullable String apiKey) {
		return send(builder(path, apiKey).GET().build());
	}

	HttpResponse<String> post(String path, @Nullable String apiKey, String json) {
		return send(builder(path, apiKey).header("Content-Type", "application/json")
			.POST(HttpRequest.BodyPublishers.ofString(json))
			.build());
	}

	/**
	 * Posts a body of unknown length: sent chunked, without a Content-Length.
	 */
	HttpResponse<String> postChunked(String path, @Nullable String apiKey, String json) {
		byte[] body = json.getBytes(StandardCharsets.UTF_8);
		return send(builder(path, apiKey).header("Content-Type", "application/json")
			.POST(HttpRequest.BodyPublishers.ofInputStream(() -> new ByteArrayInputStream(body)))
			.build());
	}

	private HttpRequest.Builder builder(String path, @Nullable String apiKey) {
		HttpRequest.Builder builder = HttpRequest.newBuilder(URI.create("http://localhost:" + this.port + path));
		if (apiKey != null) {
			builder.header("X-API-Key", apiKey);
		}
		return builder;
	}

	private HttpResponse<String> send(HttpRequest request) {
		try {
			return this.client.send(request, HttpResponse.BodyHandlers.ofString());
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
