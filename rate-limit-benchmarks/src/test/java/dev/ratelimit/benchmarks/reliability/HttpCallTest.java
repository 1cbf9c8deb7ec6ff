package dev.ratelimit.benchmarks.reliability;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIOException;

/**
 * The application-integration scenario's requests on the wire, and the answers it reads
 * from a connection that closes after them.
 */
class HttpCallTest {

	@Test
	void writesARequestWithItsHeadersAndBodyOnAConnectionThatCloses() {
		HttpCall call = HttpCall.post("/api/login", "application/x-www-form-urlencoded", "username=é")
			.forwardedFor("198.51.100.10")
			.basic("operator", "guess");
		assertThat(new String(call.wire(8080), StandardCharsets.ISO_8859_1))
			.isEqualTo("POST /api/login HTTP/1.1\r\nHost: 127.0.0.1:8080\r\n"
					+ "Content-Type: application/x-www-form-urlencoded\r\nX-Forwarded-For: 198.51.100.10\r\n"
					+ "Authorization: Basic b3BlcmF0b3I6Z3Vlc3M=\r\nContent-Length: 11\r\nConnection: close\r\n\r\n"
					+ new String("username=é".getBytes(StandardCharsets.UTF_8), StandardCharsets.ISO_8859_1));
		assertThat(call.management()).isFalse();
		assertThat(call.toManagementPort().management()).isTrue();
	}

	@Test
	void writesAGetWithoutABody() {
		assertThat(new String(HttpCall.get("/actuator/health").wire(80), StandardCharsets.ISO_8859_1))
			.isEqualTo("GET /actuator/health HTTP/1.1\r\nHost: 127.0.0.1:80\r\nConnection: close\r\n\r\n");
	}

	@Test
	void readsTheStatusAndBodyOfAnAnswer() throws IOException {
		IntegrationApp.Answer answer = IntegrationApp.Answer.read(new ByteArrayInputStream(
				"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n\r\n{\"remaining\":0,\"name\":\"é\"}"
					.getBytes(StandardCharsets.UTF_8)));
		assertThat(answer.status()).isEqualTo(200);
		assertThat(answer.body()).isEqualTo("{\"remaining\":0,\"name\":\"é\"}");
		assertThat(IntegrationApp.Answer
			.read(new ByteArrayInputStream("HTTP/1.1 429 \r\n\r\n".getBytes(StandardCharsets.ISO_8859_1)))
			.status()).isEqualTo(429);
	}

	@Test
	void refusesWhatIsNotAnHttpAnswer() {
		assertThatIOException().isThrownBy(() -> IntegrationApp.Answer.read(new ByteArrayInputStream(new byte[0])))
			.withMessageContaining("not an HTTP answer");
	}

}
