package dev.ratelimit.sample.geocoding.gazetteer;

/**
 * Distances on a spherical Earth.
 */
final class GreatCircle {

	/** The Earth's mean radius (IUGG), in kilometres. */
	static final double EARTH_RADIUS_KM = 6371.0088;

	private GreatCircle() {
	}

	/**
	 * Returns the haversine distance between two points given in degrees. The haversine
	 * form stays accurate for nearby points, where the spherical law of cosines loses
	 * precision.
	 */
	static double distanceKm(double lat1, double lon1, double lat2, double lon2) {
		double phi1 = Math.toRadians(lat1);
		double phi2 = Math.toRadians(lat2);
		double sinHalfDeltaPhi = Math.sin((phi2 - phi1) / 2);
		double sinHalfDeltaLambda = Math.sin(Math.toRadians(lon2 - lon1) / 2);
		double h = sinHalfDeltaPhi * sinHalfDeltaPhi
				+ Math.cos(phi1) * Math.cos(phi2) * sinHalfDeltaLambda * sinHalfDeltaLambda;
		return 2 * EARTH_RADIUS_KM * Math.asin(Math.sqrt(Math.min(1.0, h)));
	}

}
