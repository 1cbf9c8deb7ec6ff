package dev.ratelimit.sample.geocoding.gazetteer;

import com.fasterxml.jackson.annotation.JsonPropertyOrder;

/**
 * A named place of the gazetteer.
 *
 * @param name the place's name as GeoNames spells it, for example {@code São Paulo}
 * @param country the ISO 3166-1 alpha-2 country code, for example {@code BR}
 * @param admin1 the GeoNames code of the first-level administrative division within the
 * country (a US state's postal code, a number elsewhere), empty when unknown
 * @param lat the latitude in degrees, -90 to 90
 * @param lon the longitude in degrees, -180 to 180
 */
@JsonPropertyOrder({ "name", "country", "admin1", "lat", "lon" })
public record Place(String name, String country, String admin1, double lat, double lon) {

	/**
	 * Returns the great-circle distance from this place to a point.
	 * @param lat the point's latitude in degrees
	 * @param lon the point's longitude in degrees
	 * @return the distance in kilometres on a sphere of the Earth's mean radius
	 */
	public double distanceKmTo(double lat, double lon) {
		return GreatCircle.distanceKm(this.lat, this.lon, lat, lon);
	}

}
