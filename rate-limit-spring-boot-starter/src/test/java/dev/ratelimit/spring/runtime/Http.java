package dev.ratelimit.spring.runtime;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.Base64;

import org.jspecify.annotations.Nullable;

/**
 * Calls an application over real HTTP, as a client or as the operator.
 */
final class Http {

	private static final HttpClient client = HttpClient.newHttpClient();

	private final int port;

	Http(int port) {
		this.port = port;
	}

	HttpResponse<String> api(String apiKey) throws IOException, InterruptedException {
		return send(HttpRequest.newBuilder(uri("/api/things")).header("X-API-Key", apiKey).GET().build());
	}

	HttpResponse<String> get(String path) throws IOException, InterruptedException {
		return send(HttpRequest.newBuilder(uri(path)).GET().build());
	}

	HttpResponse<String> operator(String method, String path, @Nullable String json)
			throws IOException, InterruptedException {
		String credentials = RuntimeTestApplication.OPERATOR + ":" + RuntimeTestApplication.OPERATOR_PASSWORD;
		return send(request(method, path, json)
			.header("Authorization",
					"Basic " + Base64.getEncoder().encodeToString(credentials.getBytes(StandardCharsets.UTF_8)))
			.build());
	}

	HttpResponse<String> anonymous(String method, String path, @Nullable String json)
			throws IOException, InterruptedException {
		return send(request(method, path, json).build());
	}

	private HttpRequest.Builder request(String method, String path, @Nullable String json) {
		HttpRequest.Builder request = HttpRequest.newBuilder(uri(path))
			.method(method,
					(json != null) ? HttpRequest.BodyPublishers.ofString(json) : HttpRequest.BodyPublishers.noBody());
		if (json != null) {
			request.header("Content-Type", "application/json");
		}
		return request;
	}

	private URI uri(String path) {
		return URI.create("http://127.0.0.1:" + this.port + path);
	}

	private static HttpResponse<String> send(HttpRequest request) throws IOException, InterruptedException {
		return client.send(request, HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8));
	}

}
