package dev.ratelimit.sample.geocoding.web;

import com.fasterxml.jackson.annotation.JsonPropertyOrder;
import dev.ratelimit.sample.geocoding.gazetteer.Place;

/**
 * The answer to a reverse-geocoding request: the nearest place and how far it is.
 *
 * @param name the place's name
 * @param country the ISO 3166-1 alpha-2 country code
 * @param admin1 the GeoNames first-level administrative division code, empty when unknown
 * @param lat the place's latitude in degrees
 * @param lon the place's longitude in degrees
 * @param distanceKm the great-circle distance from the requested point, in kilometres,
 * rounded to the metre
 */
@JsonPropertyOrder({ "name", "country", "admin1", "lat", "lon", "distanceKm" })
public record NearestPlace(String name, String country, String admin1, double lat, double lon, double distanceKm) {

	static NearestPlace of(Place place, double fromLat, double fromLon) {
		double metres = Math.round(place.distanceKmTo(fromLat, fromLon) * 1000);
		return new NearestPlace(place.name(), place.country(), place.admin1(), place.lat(), place.lon(), metres / 1000);
	}

}
