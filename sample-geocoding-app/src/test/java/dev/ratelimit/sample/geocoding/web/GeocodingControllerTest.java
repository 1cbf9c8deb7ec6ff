package dev.ratelimit.sample.geocoding.web;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.util.Collections;

import dev.ratelimit.sample.geocoding.gazetteer.Gazetteer;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpInputMessage;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.http.converter.json.JacksonJsonHttpMessageConverter;
import org.springframework.test.web.servlet.assertj.MockMvcTester;
import org.springframework.test.web.servlet.assertj.MvcTestResult;
import org.springframework.test.web.servlet.setup.MockMvcBuilders;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * The controller and its problem handler on a standalone MockMvc, so that these tests
 * depend neither on the application context nor on rate limiting.
 */
class GeocodingControllerTest {

	private static MockMvcTester mvc;

	@BeforeAll
	static void setUpMockMvc() {
		Gazetteer gazetteer = Gazetteer.loadFromClasspath(Gazetteer.DEFAULT_RESOURCE);
		mvc = MockMvcTester.create(MockMvcBuilders.standaloneSetup(new GeocodingController(gazetteer))
			.setControllerAdvice(new GeocodingProblemHandler(), new BatchBodyLimit())
			.build());
	}

	@Test
	void geocodesRabatAsAJsonArrayOfPlaces() {
		MvcTestResult result = mvc.get().uri("/api/geocode").param("q", "Rabat").param("country", "ma").exchange();
		assertThat(result).hasStatusOk().hasContentTypeCompatibleWith(MediaType.APPLICATION_JSON);
		assertThat(result).bodyJson().extractingPath("$[0].name").isEqualTo("Rabat");
		assertThat(result).bodyJson().extractingPath("$[0].country").isEqualTo("MA");
		assertThat(result).bodyJson().extractingPath("$[0].admin1").isEqualTo("04");
		assertThat(result).bodyJson().extractingPath("$[0].lat").isEqualTo(34.01325);
		assertThat(result).bodyJson().extractingPath("$[0].lon").isEqualTo(-6.83255);
		assertThat(result).bodyJson()
			.extractingPath("$[0]")
			.asMap()
			.containsOnlyKeys("name", "country", "admin1", "lat", "lon");
	}

	@Test
	void returnsTenMatchesByDefaultAndHonoursTheLimit() {
		assertThat(mvc.get().uri("/api/geocode").param("q", "San")).bodyJson()
			.extractingPath("$.length()")
			.isEqualTo(10);
		assertThat(mvc.get().uri("/api/geocode").param("q", "San").param("limit", "100")).bodyJson()
			.extractingPath("$.length()")
			.isEqualTo(100);
	}

	@Test
	void answersAnUnknownPlaceWithAnEmptyArray() {
		assertThat(mvc.get().uri("/api/geocode").param("q", "Xqzzyvillezz")).hasStatusOk().bodyJson().isEqualTo("[]");
	}

	@Test
	void reverseGeocodesToTheNearestPlaceWithItsDistance() {
		MvcTestResult result = mvc.get().uri("/api/reverse").param("lat", "34.0209").param("lon", "-6.8416").exchange();
		assertThat(result).hasStatusOk().hasContentTypeCompatibleWith(MediaType.APPLICATION_JSON);
		assertThat(result).bodyJson().extractingPath("$.name").isEqualTo("Rabat");
		assertThat(result).bodyJson().extractingPath("$.distanceKm").isEqualTo(1.191);
		assertThat(result).bodyJson()
			.extractingPath("$")
			.asMap()
			.containsOnlyKeys("name", "country", "admin1", "lat", "lon", "distanceKm");
	}

	@Test
	void geocodesABatchWithOneResultListPerQuery() {
		MvcTestResult result = mvc.post()
			.uri("/api/geocode/batch")
			.contentType(MediaType.APPLICATION_JSON)
			.content("[\"Rabat\",\"Casablanca\",\"sao paulo\"]")
			.exchange();
		assertThat(result).hasStatusOk();
		assertThat(result).bodyJson().extractingPath("$.length()").isEqualTo(3);
		assertThat(result).bodyJson().extractingPath("$[0][0].name").isEqualTo("Rabat");
		assertThat(result).bodyJson().extractingPath("$[1][0].name").isEqualTo("Casablanca");
		assertThat(result).bodyJson().extractingPath("$[2][0].name").isEqualTo("São Paulo");
		assertThat(result).bodyJson()
			.extractingPath("$[2].length()")
			.isEqualTo(GeocodingController.BATCH_LIMIT_PER_QUERY);
	}

	@Test
	void rejectsAMissingQueryWithAProblem() {
		assertProblem(mvc.get().uri("/api/geocode").exchange(), "q");
	}

	@Test
	void rejectsABlankQueryWithAProblem() {
		assertProblem(mvc.get().uri("/api/geocode").param("q", "   ").exchange(), "q");
		assertProblem(mvc.get().uri("/api/geocode").param("q", "").exchange(), "q");
	}

	@Test
	void rejectsAnOverlongQueryWithAProblem() {
		assertProblem(mvc.get().uri("/api/geocode").param("q", "a".repeat(201)).exchange(), "q");
	}

	@Test
	void rejectsALimitOutsideOneToAHundredWithAProblem() {
		assertProblem(mvc.get().uri("/api/geocode").param("q", "Rabat").param("limit", "0").exchange(), "limit");
		assertProblem(mvc.get().uri("/api/geocode").param("q", "Rabat").param("limit", "1000").exchange(), "limit");
		assertProblem(mvc.get().uri("/api/geocode").param("q", "Rabat").param("limit", "ten").exchange(), "limit");
	}

	@Test
	void rejectsACountryThatIsNotATwoLetterCodeWithAProblem() {
		assertProblem(mvc.get().uri("/api/geocode").param("q", "Rabat").param("country", "Morocco").exchange(),
				"country");
	}

	@Test
	void rejectsALatitudeOffTheGlobeWithAProblem() {
		MvcTestResult result = mvc.get().uri("/api/reverse").param("lat", "95").param("lon", "0").exchange();
		assertProblem(result, "lat");
		assertThat(result).bodyJson().extractingPath("$.detail").asString().contains("between -90 and 90", "95");
	}

	@Test
	void rejectsALongitudeOffTheGlobeWithAProblem() {
		assertProblem(mvc.get().uri("/api/reverse").param("lat", "0").param("lon", "200").exchange(), "lon");
		assertProblem(mvc.get().uri("/api/reverse").param("lat", "0").param("lon", "NaN").exchange(), "lon");
	}

	@Test
	void rejectsANonNumericOrMissingCoordinateWithAProblem() {
		MvcTestResult result = mvc.get().uri("/api/reverse").param("lat", "north").param("lon", "0").exchange();
		assertProblem(result, "lat");
		assertThat(result).bodyJson().extractingPath("$.detail").asString().contains("must be a number", "north");
		assertProblem(mvc.get().uri("/api/reverse").param("lat", "1").exchange(), "lon");
		MvcTestResult twice = mvc.get().uri("/api/reverse").param("lat", "north", "1").param("lon", "0").exchange();
		assertProblem(twice, "lat");
		assertThat(twice).bodyJson()
			.extractingPath("$.detail")
			.isEqualTo("Parameter 'lat' must be a number, but was 'north, 1'.");
	}

	@Test
	void rejectsABatchThatIsNotAJsonArrayOfStringsWithAProblem() {
		assertProblem(postBatch("[\"Rabat\","), "body");
		assertProblem(postBatch("{\"q\":\"Rabat\"}"), "body");
		assertProblem(postBatch(""), "body");
	}

	@Test
	void rejectsAnEmptyBatchWithAProblem() {
		assertProblem(postBatch("[]"), "queries");
	}

	@Test
	void rejectsABatchOfTenThousandQueriesWithAProblem() {
		String tenThousand = "[" + String.join(",", Collections.nCopies(10_000, "\"Rabat\"")) + "]";
		MvcTestResult result = postBatch(tenThousand);
		assertProblem(result, "queries");
		assertThat(result).bodyJson().extractingPath("$.detail").asString().contains("10000", "100");
	}

	@Test
	void rejectsABatchWithANullOrBlankQueryWithAProblem() {
		assertProblem(postBatch("[\"Rabat\",null]"), "queries[1]");
		assertProblem(postBatch("[\" \",\"Rabat\"]"), "queries[0]");
	}

	@Test
	void refusesABatchBodyOverTheBoundWith413BeforeReadingIt() {
		StringBuilder body = new StringBuilder("[");
		while (body.length() <= BatchBodyLimit.MAX_BYTES) {
			body.append("\"a\",");
		}
		body.append("\"a\"]");
		MvcTestResult result = postBatch(body.toString());
		assertThat(result).hasStatus(HttpStatus.CONTENT_TOO_LARGE).hasContentType(MediaType.APPLICATION_PROBLEM_JSON);
		assertThat(result).bodyJson().extractingPath("$.title").isEqualTo("Request body too large");
		assertThat(result).bodyJson()
			.extractingPath("$.detail")
			.isEqualTo("The request body must be at most 262144 bytes: a JSON array of 1 to 100 queries.");
	}

	@Test
	void boundsABatchBodyOfUnknownLengthWhileReadingIt() throws Exception {
		BatchBodyLimit limit = new BatchBodyLimit();
		assertThat(readThrough(limit, new byte[(int) BatchBodyLimit.MAX_BYTES]))
			.hasSize((int) BatchBodyLimit.MAX_BYTES);
		assertThatExceptionOfType(BatchBodyLimit.BodyTooLargeException.class)
			.isThrownBy(() -> readThrough(limit, new byte[(int) BatchBodyLimit.MAX_BYTES + 1]));
	}

	/**
	 * Reads a body without a Content-Length (as a chunked request's) through the advice.
	 */
	private static byte[] readThrough(BatchBodyLimit limit, byte[] body) throws IOException {
		HttpInputMessage chunked = new HttpInputMessage() {

			@Override
			public InputStream getBody() {
				return new ByteArrayInputStream(body);
			}

			@Override
			public HttpHeaders getHeaders() {
				return new HttpHeaders();
			}

		};
		return limit.beforeBodyRead(chunked, null, GeocodeBatch.class, JacksonJsonHttpMessageConverter.class)
			.getBody()
			.readAllBytes();
	}

	private static MvcTestResult postBatch(String body) {
		return mvc.post().uri("/api/geocode/batch").contentType(MediaType.APPLICATION_JSON).content(body).exchange();
	}

	private static void assertProblem(MvcTestResult result, String parameter) {
		assertThat(result).hasStatus(HttpStatus.BAD_REQUEST).hasContentType(MediaType.APPLICATION_PROBLEM_JSON);
		assertThat(result).bodyJson().extractingPath("$.status").isEqualTo(400);
		assertThat(result).bodyJson()
			.extractingPath("$.title")
			.isEqualTo(GeocodingProblemHandler.INVALID_REQUEST_TITLE);
		assertThat(result).bodyJson().extractingPath("$.parameter").isEqualTo(parameter);
		assertThat(result).bodyJson().extractingPath("$.detail").asString().contains(parameter);
	}

}
