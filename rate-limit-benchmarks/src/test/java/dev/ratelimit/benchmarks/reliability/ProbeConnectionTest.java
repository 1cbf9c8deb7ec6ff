package dev.ratelimit.benchmarks.reliability;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The probe's HTTP/1.1 client: statuses and {@code Retry-After} of sized and chunked
 * answers on one keep-alive connection, and failures told apart.
 */
class ProbeConnectionTest {

	@Test
	void readsSizedAndChunkedAnswersOnOneKeepAliveConnection() throws Exception {
		List<String> clients = new CopyOnWriteArrayList<>();
		try (ServerSocket server = new ServerSocket(0, 10, InetAddress.getLoopbackAddress())) {
			Thread serving = new Thread(() -> serve(server, clients, List.of(
					"HTTP/1.1 200 \r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}",
					"HTTP/1.1 429 \r\nRetry-After: 1\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n2;x=y\r\nde\r\n0\r\n\r\n",
					"HTTP/1.1 503 \r\nRetry-After: 1\r\nContent-Length: 0\r\n\r\n",
					"HTTP/1.1 500 \r\nContent-Length: 0\r\nConnection: close\r\n\r\n")));
			serving.start();
			Probe.Connection connection = new Probe.Connection();
			assertThat(connection.send(server.getLocalPort(), "a", 2000)).containsExactly(200, 0);
			assertThat(connection.send(server.getLocalPort(), "b", 2000)).containsExactly(429, 1);
			assertThat(connection.send(server.getLocalPort(), "c", 2000)).containsExactly(503, 1);
			assertThat(connection.send(server.getLocalPort(), "d", 2000)).containsExactly(500, 0);
			serving.join(5000);
			connection.close();
		}
		assertThat(clients).containsExactly("a", "b", "c", "d");
	}

	@Test
	void tellsATimeoutFromAFailure() throws Exception {
		Probe.Connection connection = new Probe.Connection();
		try (ServerSocket silent = new ServerSocket(0, 10, InetAddress.getLoopbackAddress())) {
			assertThat(connection.send(silent.getLocalPort(), "a", 200)).containsExactly(Probe.TIMED_OUT, 0);
		}
		int closed;
		try (ServerSocket gone = new ServerSocket(0, 10, InetAddress.getLoopbackAddress())) {
			closed = gone.getLocalPort();
		}
		assertThat(connection.send(closed, "a", 200)).containsExactly(Probe.FAILED, 0);
	}

	private static void serve(ServerSocket server, List<String> clients, List<String> answers) {
		try (Socket socket = server.accept()) {
			BufferedReader in = new BufferedReader(
					new InputStreamReader(socket.getInputStream(), StandardCharsets.US_ASCII));
			OutputStream out = socket.getOutputStream();
			for (String answer : answers) {
				for (String line = in.readLine(); line != null && !line.isEmpty(); line = in.readLine()) {
					if (line.startsWith(SampleApp.CLIENT_HEADER + ": ")) {
						clients.add(line.substring(SampleApp.CLIENT_HEADER.length() + 2));
					}
				}
				out.write(answer.getBytes(StandardCharsets.US_ASCII));
				out.flush();
			}
		}
		catch (IOException ex) {
			throw new IllegalStateException(ex);
		}
	}

}
