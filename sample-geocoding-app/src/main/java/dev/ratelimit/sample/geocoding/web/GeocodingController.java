package dev.ratelimit.sample.geocoding.web;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.regex.Pattern;

import dev.ratelimit.sample.geocoding.gazetteer.Gazetteer;
import dev.ratelimit.sample.geocoding.gazetteer.Place;
import dev.ratelimit.spring.annotation.RateLimited;
import org.jspecify.annotations.Nullable;

import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;

/**
 * The geocoding API: place search by name, single or in batches, and reverse geocoding.
 */
@RestController
@RequestMapping("/api")
public class GeocodingController {

	/**
	 * The number of matches {@code GET /api/geocode} returns unless asked for another.
	 */
	public static final int DEFAULT_LIMIT = 10;

	/** The largest {@code limit} accepted by {@code GET /api/geocode}. */
	public static final int MAX_LIMIT = 100;

	/**
	 * The most queries one {@code POST /api/geocode/batch} may hold; each costs one
	 * permit.
	 */
	public static final int MAX_BATCH_QUERIES = 100;

	/** The number of matches returned for each query of a batch. */
	public static final int BATCH_LIMIT_PER_QUERY = 5;

	/** The longest query accepted, in characters; no place name comes close. */
	public static final int MAX_QUERY_LENGTH = 200;

	private static final Pattern COUNTRY_CODE = Pattern.compile("[A-Za-z]{2}");

	private final Gazetteer gazetteer;

	public GeocodingController(Gazetteer gazetteer) {
		this.gazetteer = gazetteer;
	}

	@GetMapping("/geocode")
	public List<Place> geocode(@RequestParam String q, @RequestParam(required = false) @Nullable String country,
			@RequestParam(defaultValue = "" + DEFAULT_LIMIT) int limit) {
		checkQuery("q", q);
		if (limit < 1 || limit > MAX_LIMIT) {
			throw new InvalidGeocodingRequestException("limit",
					"Parameter 'limit' must be between 1 and " + MAX_LIMIT + ", but was " + limit + ".");
		}
		return this.gazetteer.search(q, countryCode(country), limit);
	}

	@GetMapping("/reverse")
	public NearestPlace reverse(@RequestParam double lat, @RequestParam double lon) {
		if (!(lat >= -90 && lat <= 90)) {
			throw new InvalidGeocodingRequestException("lat",
					"Parameter 'lat' must be a latitude between -90 and 90, but was " + lat + ".");
		}
		if (!(lon >= -180 && lon <= 180)) {
			throw new InvalidGeocodingRequestException("lon",
					"Parameter 'lon' must be a longitude between -180 and 180, but was " + lon + ".");
		}
		return NearestPlace.of(this.gazetteer.nearest(lat, lon), lat, lon);
	}

	/**
	 * Geocodes up to {@value #MAX_BATCH_QUERIES} queries at once, answering each with up
	 * to {@value #BATCH_LIMIT_PER_QUERY} matches, in the order of the queries. Rate
	 * limiting charges one permit per query: {@code #queries.size()}.
	 * @param queries the names to look up, such as {@code ["Rabat","Casablanca"]}
	 * @return one list of matches per query
	 */
	@PostMapping("/geocode/batch")
	@RateLimited(policy = "api", cost = "#{#queries.size()}")
	public List<List<Place>> batch(@RequestBody GeocodeBatch queries) {
		List<List<Place>> results = new ArrayList<>(queries.size());
		for (String query : queries.queries()) {
			results.add(this.gazetteer.search(query, null, BATCH_LIMIT_PER_QUERY));
		}
		return results;
	}

	static void checkQuery(String parameter, @Nullable String query) {
		if (query == null || query.isBlank()) {
			throw new InvalidGeocodingRequestException(parameter, "'" + parameter
					+ "' must be a place name such as Rabat, but is " + ((query == null) ? "null" : "blank") + ".");
		}
		if (query.length() > MAX_QUERY_LENGTH) {
			throw new InvalidGeocodingRequestException(parameter, "'" + parameter + "' must be at most "
					+ MAX_QUERY_LENGTH + " characters long, but has " + query.length() + ".");
		}
	}

	private static @Nullable String countryCode(@Nullable String country) {
		if (country == null || country.isEmpty()) {
			return null;
		}
		if (!COUNTRY_CODE.matcher(country).matches()) {
			throw new InvalidGeocodingRequestException("country",
					"Parameter 'country' must be an ISO 3166-1 alpha-2 code such as MA, but was '" + abbreviate(country)
							+ "'.");
		}
		return country.toUpperCase(Locale.ROOT);
	}

	private static String abbreviate(String value) {
		return (value.length() <= 20) ? value : value.substring(0, 20) + "…";
	}

}
