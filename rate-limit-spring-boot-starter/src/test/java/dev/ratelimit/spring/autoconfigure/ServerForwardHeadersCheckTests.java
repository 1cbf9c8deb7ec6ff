package dev.ratelimit.spring.autoconfigure;

import java.util.List;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.boot.web.server.servlet.ServletWebServerFactory;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Start-up fails when the web server would replace the client address with a forwarded
 * one that the operator did not choose to believe, so that a client could choose its own
 * {@code ip} key; except on a detected cloud platform, where Tomcat's RemoteIpValve lets
 * only callers on a private address choose theirs: the application starts with one
 * warning, unless {@code ratelimit.client.require-internal-proxies} is true. See
 * {@code ForwardHeadersStrategyTests} for the strategies that start, on a real Tomcat.
 */
@ExtendWith(OutputCaptureExtension.class)
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

	@ParameterizedTest(name = "{0}")
	@ValueSource(strings = { "an ip policy", "no ip policy" })
	void startsOnACloudPlatformWithOneWarningThatOnlyACallerOnAPrivateAddressCouldChooseIt(String policies,
			CapturedOutput output) {
		WebApplicationContextRunner runner = policies.equals("an ip policy") ? this.runner
				: this.runner.withPropertyValues("ratelimit.policies.api.key=principal");
		runner.withPropertyValues("spring.main.cloud-platform=kubernetes").run((context) -> {
			assertThat(context).hasNotFailed();
			if (policies.equals("no ip policy")) {
				assertThat(context.getEnvironment().getProperty("ratelimit.policies.api.key")).isEqualTo("principal");
			}
		});
		assertThat(cloudPlatformWarnings(output)).singleElement()
			.asString()
			.contains("WARN")
			.contains("Spring Boot turned Tomcat's RemoteIpValve on for the detected cloud platform KUBERNETES"
					+ " (server.forward-headers-strategy is not set)")
			.contains("It trusts X-Forwarded-For from every private and loopback address, since"
					+ " server.tomcat.remoteip.internal-proxies is not set")
			.contains("Only a caller on a private address (another pod, a host inside your network) could therefore"
					+ " choose its client address")
			.contains("Set server.tomcat.remoteip.internal-proxies to exactly your proxies to narrow that, or"
					+ " ratelimit.client.require-internal-proxies=true to fail start-up instead");
	}

	@Test
	void failsStartUpOnACloudPlatformWhenInternalProxiesAreRequired() {
		this.runner
			.withPropertyValues("spring.main.cloud-platform=kubernetes",
					"ratelimit.client.require-internal-proxies=true")
			.run((context) -> ConfigurationFailures.assertFailure(context, "server.forward-headers-strategy",
					"is not set, and Spring Boot uses 'native' on the detected cloud platform KUBERNETES: Tomcat's"
							+ " RemoteIpValve then replaces the client address"));
		this.runner
			.withPropertyValues("spring.main.cloud-platform=kubernetes",
					"ratelimit.client.require-internal-proxies=true")
			.run((context) -> assertThat(context.getStartupFailure()).rootCause()
				.hasMessageContaining("server.tomcat.remoteip.internal-proxies")
				.hasMessageContaining("ratelimit.client.require-internal-proxies is true"));
	}

	@Test
	void startsOnACloudPlatformWithoutAWarningWhenTheOperatorChoseTheProxiesOrTheStrategy(CapturedOutput output) {
		for (String choice : new String[] { "server.tomcat.remoteip.internal-proxies=10\\.0\\.0\\.1",
				"server.forward-headers-strategy=none", "server.forward-headers-strategy=framework" }) {
			this.runner.withPropertyValues("spring.main.cloud-platform=kubernetes", choice)
				.run((context) -> assertThat(context).hasNotFailed());
			this.runner
				.withPropertyValues("spring.main.cloud-platform=kubernetes", choice,
						"ratelimit.client.require-internal-proxies=true")
				.run((context) -> assertThat(context).hasNotFailed());
		}
		assertThat(cloudPlatformWarnings(output)).isEmpty();
	}

	@Test
	void failsStartUpOnACloudPlatformForAnotherServerWhichBelievesEveryPeer() {
		this.runner.withPropertyValues("spring.main.cloud-platform=kubernetes")
			.withBean("otherServer", ServletWebServerFactory.class, () -> (initializers) -> {
				throw new UnsupportedOperationException();
			})
			.run((context) -> ConfigurationFailures.assertFailure(context, "server.forward-headers-strategy",
					"is not set, and Spring Boot uses 'native' on the detected cloud platform KUBERNETES: the web"
							+ " server"));
	}

	@Test
	void failsStartUpOnACloudPlatformForARemoteIpHeaderTheOperatorSetWithoutInternalProxies() {
		this.runner
			.withPropertyValues("spring.main.cloud-platform=kubernetes",
					"server.tomcat.remoteip.remote-ip-header=X-Real-IP")
			.run((context) -> ConfigurationFailures.assertFailure(context, "server.tomcat.remoteip.remote-ip-header",
					"turns Tomcat's RemoteIpValve on"));
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

	private static List<String> cloudPlatformWarnings(CapturedOutput output) {
		return output.getAll()
			.lines()
			.filter((line) -> line.contains("Spring Boot turned Tomcat's RemoteIpValve on"))
			.toList();
	}

}
