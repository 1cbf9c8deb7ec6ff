package dev.ratelimit.spring.autoconfigure;

import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;
import org.springframework.boot.web.server.servlet.ServletWebServerFactory;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Start-up fails when the web server would replace the client address with a forwarded
 * one that the operator did not choose to believe, so that a client could choose its own
 * {@code ip} key; see {@code ForwardHeadersStrategyTests} for the strategies that start,
 * on a real Tomcat.
 */
class ServerForwardHeadersCheckTests {

	private final WebApplicationContextRunner runner = new WebApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(RateLimitAutoConfiguration.class, RateLimitWebAutoConfiguration.class))
		.withPropertyValues("ratelimit.policies.api.key=ip", "ratelimit.policies.api.limits[0].rate=5/1s");

	@Test
	void failsStartUpForNativeForwardHeadersWhoseInternalProxiesTheOperatorDidNotChoose() {
		this.runner.withPropertyValues("server.forward-headers-strategy=native").run((context) -> {
			ConfigurationFailures.assertFailure(context, "server.forward-headers-strategy",
					"is 'native': Tomcat's RemoteIpValve then replaces the client address");
			FailureAnalysis analysis = new RateLimitConfigurationFailureAnalyzer().analyze(context.getStartupFailure());
			assertThat(analysis.getDescription()).contains("server.tomcat.remoteip.internal-proxies")
				.contains("server.forward-headers-strategy=none")
				.contains("ratelimit.client.trusted-proxies");
			assertThat(analysis.getAction()).doesNotContain("'rate'");
		});
	}

	@Test
	void failsStartUpOnACloudPlatformOnWhichSpringBootTurnsNativeOn() {
		this.runner.withPropertyValues("spring.main.cloud-platform=kubernetes")
			.run((context) -> ConfigurationFailures.assertFailure(context, "server.forward-headers-strategy",
					"is not set, and Spring Boot uses 'native' on the detected cloud platform KUBERNETES"));
	}

	@Test
	void failsStartUpForARemoteIpHeaderWhichTurnsTheValveOnWhateverTheStrategy() {
		this.runner
			.withPropertyValues("server.forward-headers-strategy=none",
					"server.tomcat.remoteip.remote-ip-header=X-Forwarded-For")
			.run((context) -> ConfigurationFailures.assertFailure(context, "server.tomcat.remoteip.remote-ip-header",
					"is set, which turns Tomcat's RemoteIpValve on whatever server.forward-headers-strategy says"));
		this.runner.withPropertyValues("server.tomcat.remoteip.protocol-header=X-Forwarded-Proto")
			.run((context) -> ConfigurationFailures.assertFailure(context, "server.tomcat.remoteip.protocol-header",
					"turns Tomcat's RemoteIpValve on"));
	}

	@Test
	void failsStartUpForNativeOnAnotherServerWhoseTrustNoPropertyNarrows() {
		this.runner
			.withPropertyValues("server.forward-headers-strategy=native",
					"server.tomcat.remoteip.internal-proxies=10.0.0.0/8")
			.withBean("otherServer", ServletWebServerFactory.class, () -> (initializers) -> {
				throw new UnsupportedOperationException();
			})
			.run((context) -> ConfigurationFailures.assertFailure(context, "server.forward-headers-strategy",
					"server.tomcat.remoteip.internal-proxies applies to Tomcat only"));
	}

	@Test
	void startsWithNativeForwardHeadersWhenTheOperatorChoseTheInternalProxies() {
		this.runner
			.withPropertyValues("server.forward-headers-strategy=native",
					"server.tomcat.remoteip.internal-proxies=10.0.0.0/8")
			.run((context) -> assertThat(context).hasNotFailed());
		this.runner
			.withPropertyValues("spring.main.cloud-platform=kubernetes", "server.tomcat.remoteip.internal-proxies=")
			.run((context) -> assertThat(context).hasNotFailed());
	}

	@Test
	void startsWithTheStrategiesThatLetNoClientChooseItsAddress() {
		this.runner.run((context) -> assertThat(context).hasNotFailed());
		this.runner.withPropertyValues("server.forward-headers-strategy=none")
			.run((context) -> assertThat(context).hasNotFailed());
		this.runner.withPropertyValues("server.forward-headers-strategy=framework")
			.run((context) -> assertThat(context).hasNotFailed());
		this.runner.withPropertyValues("spring.main.cloud-platform=kubernetes", "server.forward-headers-strategy=none")
			.run((context) -> assertThat(context).hasNotFailed());
	}

}
