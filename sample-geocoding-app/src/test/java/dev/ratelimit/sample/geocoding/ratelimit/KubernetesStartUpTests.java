package dev.ratelimit.sample.geocoding.ratelimit;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.List;

import dev.ratelimit.sample.geocoding.GeocodingApplication;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The sample on Kubernetes ({@code spring.main.cloud-platform=kubernetes}, as Spring Boot
 * detects from {@code KUBERNETES_SERVICE_HOST} and {@code KUBERNETES_SERVICE_PORT}):
 * Spring Boot turns Tomcat's RemoteIpValve on, the sample starts with one warning, and an
 * anonymous caller behind a proxy on a private address (here 127.0.0.1) is keyed by the
 * address that proxy appended, whatever it forged left of it.
 */
@ExtendWith(OutputCaptureExtension.class)
class KubernetesStartUpTests {

	@Test
	void startsWithOneWarningAndKeysAnAnonymousCallerByTheAddressItsProxySaw(CapturedOutput output) throws Exception {
		try (ConfigurableApplicationContext context = new SpringApplicationBuilder(GeocodingApplication.class)
			.run("--server.port=0", "--spring.main.cloud-platform=kubernetes")) {
			int port = ((WebServerApplicationContext) context).getWebServer().getPort();
			HttpClient http = HttpClient.newHttpClient();
			List<Integer> statuses = new ArrayList<>();
			for (int i = 1; i <= 11; i++) {
				HttpRequest request = HttpRequest
					.newBuilder(URI.create("http://127.0.0.1:" + port + "/api/reverse?lat=34&lon=-6"))
					.header("X-Forwarded-For", "198.51.100." + i + ", 203.0.113.7")
					.build();
				statuses.add(http.send(request, HttpResponse.BodyHandlers.discarding()).statusCode());
			}
			// the anonymous tier: 10 a minute
			assertThat(statuses.subList(0, 10)).containsOnly(200);
			assertThat(statuses.get(10)).isEqualTo(429);
		}
		assertThat(output.getAll().lines().filter((line) -> line.contains("RemoteIpValve"))).singleElement()
			.asString()
			.contains("WARN")
			.contains("for the detected cloud platform KUBERNETES")
			.contains("server.tomcat.remoteip.internal-proxies");
	}

}
