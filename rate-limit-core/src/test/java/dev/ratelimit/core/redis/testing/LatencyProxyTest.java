package dev.ratelimit.core.redis.testing;

import java.io.UncheckedIOException;
import java.net.BindException;
import java.net.ConnectException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.SocketTimeoutException;
import java.time.Duration;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/**
 * The proxy forwards commands and replies, holds replies back for the injected latency,
 * and simulates a hung and a gone server.
 */
class LatencyProxyTest {

	private LatencyProxy proxy;

	@BeforeEach
	void startProxy() {
		this.proxy = LatencyProxy.start(TestRedis.standalone());
	}

	@AfterEach
	void closeProxy() {
		this.proxy.close();
	}

	@Test
	void forwardsCommandsAndTheirRepliesAndLetsGoOfClosedConnections() {
		try (RespClient client = this.proxy.endpoint().client()) {
			assertThat(client.command("PING")).isEqualTo("PONG");
			assertThat(client.command("ECHO", "through the proxy")).isEqualTo("through the proxy");
		}
		await().atMost(Duration.ofSeconds(5)).until(() -> this.proxy.connections() == 0);
	}

	@Test
	void aReplyComesNoSoonerThanTheLatencySetAtRunTime() {
		try (RespClient client = this.proxy.endpoint().client()) {
			client.command("PING");
			this.proxy.latency(Duration.ofMillis(300));
			long start = System.nanoTime();
			assertThat(client.command("PING")).isEqualTo("PONG");
			assertThat(Duration.ofNanos(System.nanoTime() - start)).isGreaterThanOrEqualTo(Duration.ofMillis(300));
		}
	}

	@Test
	void aBlackHoleAcceptsButNeverAnswersAndForwardingClosesItsConnections() {
		try (RespClient before = this.proxy.endpoint().client()) {
			this.proxy.blackHole();
			try (RespClient during = new RespClient("127.0.0.1", this.proxy.port(), 300)) {
				assertThatThrownBy(() -> during.command("PING")).isInstanceOf(UncheckedIOException.class)
					.hasCauseInstanceOf(SocketTimeoutException.class);
			}
			this.proxy.forward();
			// its request was dropped: a reply now would answer the wrong command
			assertThatThrownBy(() -> before.command("PING")).isInstanceOf(UncheckedIOException.class);
		}
		try (RespClient after = this.proxy.endpoint().client()) {
			assertThat(after.command("PING")).isEqualTo("PONG");
		}
	}

	@Test
	void refusesConnectionsUntilItForwardsAgain() {
		this.proxy.refuse();
		for (int attempt = 0; attempt < 50; attempt++) {
			assertThatThrownBy(() -> this.proxy.endpoint().client()).isInstanceOf(UncheckedIOException.class)
				.hasCauseInstanceOf(ConnectException.class);
		}
		// the port stays the proxy's meanwhile: nothing else can listen on it and answer
		// in its place
		assertThatThrownBy(() -> {
			try (ServerSocket other = new ServerSocket(this.proxy.port(), 1, InetAddress.getLoopbackAddress())) {
				other.getLocalPort();
			}
		}).isInstanceOf(BindException.class);
		this.proxy.forward();
		try (RespClient client = this.proxy.endpoint().client()) {
			assertThat(client.command("PING")).isEqualTo("PONG");
		}
	}

}
