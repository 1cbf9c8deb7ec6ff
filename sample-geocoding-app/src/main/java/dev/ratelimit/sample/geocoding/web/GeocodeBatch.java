package dev.ratelimit.sample.geocoding.web;

import java.util.List;

import com.fasterxml.jackson.annotation.JsonCreator;
import com.fasterxml.jackson.annotation.JsonValue;
import org.jspecify.annotations.Nullable;

/**
 * The body of {@code POST /api/geocode/batch}: a JSON array of 1 to
 * {@value GeocodingController#MAX_BATCH_QUERIES} place names. It is checked while the
 * body is read, before the handler is invoked, so a bad batch is answered 400 without
 * being charged one permit per query.
 *
 * @param queries the place names, in order
 */
public record GeocodeBatch(List<String> queries) {

	/**
	 * Reads and checks a batch.
	 * @param queries the JSON array
	 * @return the batch
	 * @throws InvalidGeocodingRequestException naming what is wrong
	 */
	@JsonCreator(mode = JsonCreator.Mode.DELEGATING)
	public static GeocodeBatch of(@Nullable List<@Nullable String> queries) {
		int max = GeocodingController.MAX_BATCH_QUERIES;
		if (queries == null || queries.isEmpty()) {
			throw new InvalidGeocodingRequestException("queries",
					"The request body must be a JSON array of 1 to " + max + " queries, but it is empty.");
		}
		if (queries.size() > max) {
			throw new InvalidGeocodingRequestException("queries", "The request body must be a JSON array of 1 to " + max
					+ " queries, but it holds " + queries.size() + ".");
		}
		for (int i = 0; i < queries.size(); i++) {
			GeocodingController.checkQuery("queries[" + i + "]", queries.get(i));
		}
		return new GeocodeBatch(List.copyOf(queries));
	}

	/**
	 * Returns the number of queries, which is what the batch costs.
	 * @return the number of queries
	 */
	public int size() {
		return this.queries.size();
	}

	@JsonValue
	@Override
	public List<String> queries() {
		return this.queries;
	}

}
