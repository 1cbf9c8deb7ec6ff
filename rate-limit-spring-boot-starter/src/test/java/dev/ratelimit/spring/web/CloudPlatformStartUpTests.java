package dev.ratelimit.spring.web;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A servlet application on Tomcat, with an {@code ip} policy, starts on a detected cloud
 * platform (Kubernetes) with its default settings, and warns once that Tomcat's
 * RemoteIpValve believes every private address; see
 * {@code ServerForwardHeadersCheckTests} for the other settings.
 */
@ExtendWith(OutputCaptureExtension.class)
class CloudPlatformStartUpTests {

	@Test
	void startsOnKubernetesWithOneWarning(CapturedOutput output) {
		try (ConfigurableApplicationContext context = new SpringApplicationBuilder(WebTestApplication.class)
			.profiles("mvc")
			.properties("server.port=0", "spring.main.cloud-platform=kubernetes")
			.run()) {
			assertThat(((WebServerApplicationContext) context).getWebServer().getPort()).isPositive();
			assertThat(context.getEnvironment().getProperty("ratelimit.policies.per-ip.key")).isEqualTo("ip");
		}
		assertThat(output.getAll().lines().filter((line) -> line.contains("RemoteIpValve"))).singleElement()
			.asString()
			.contains("WARN")
			.contains("Spring Boot turned Tomcat's RemoteIpValve on for the detected cloud platform KUBERNETES");
	}

}
