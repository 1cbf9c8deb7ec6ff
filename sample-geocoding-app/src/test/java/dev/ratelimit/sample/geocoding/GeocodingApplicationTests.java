package dev.ratelimit.sample.geocoding;

import dev.ratelimit.sample.geocoding.gazetteer.Gazetteer;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.webmvc.test.autoconfigure.AutoConfigureMockMvc;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.test.web.servlet.assertj.MockMvcTester;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The whole application, as it starts. Makes only a few anonymous requests, so that the
 * shipped rate limits are never reached.
 */
@SpringBootTest
@AutoConfigureMockMvc
class GeocodingApplicationTests {

	@Autowired
	private MockMvcTester mvc;

	@Autowired
	private Gazetteer gazetteer;

	@Test
	void startsWithTheShippedGazetteerAndAnswersGeocodingRequests() {
		assertThat(this.gazetteer.size()).isGreaterThan(150_000);
		assertThat(this.mvc.get().uri("/api/geocode").param("q", "sao paulo").param("limit", "1")).hasStatusOk()
			.hasContentTypeCompatibleWith(MediaType.APPLICATION_JSON)
			.bodyJson()
			.extractingPath("$[0].name")
			.isEqualTo("São Paulo");
	}

	@Test
	void answersABadCoordinateWithAProblem() {
		assertThat(this.mvc.get().uri("/api/reverse").param("lat", "95").param("lon", "0"))
			.hasStatus(HttpStatus.BAD_REQUEST)
			.hasContentType(MediaType.APPLICATION_PROBLEM_JSON)
			.bodyJson()
			.extractingPath("$.parameter")
			.isEqualTo("lat");
	}

}
