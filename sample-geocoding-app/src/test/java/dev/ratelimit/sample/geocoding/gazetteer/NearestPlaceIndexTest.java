package dev.ratelimit.sample.geocoding.gazetteer;

import java.util.Random;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;
import static org.assertj.core.api.Assertions.within;

class NearestPlaceIndexTest {

	@Test
	void findsTheSamePointAsAScanIncludingAtTheSeamsAndWithDuplicates() {
		Random random = new Random(7);
		int n = 3_000;
		double[] lats = new double[n];
		double[] lons = new double[n];
		for (int i = 0; i < n; i++) {
			switch (i % 5) {
				case 0 -> { // near the antimeridian
					lats[i] = 180 * random.nextDouble() - 90;
					lons[i] = (random.nextBoolean() ? 180 : -180)
							- Math.signum(random.nextGaussian()) * random.nextDouble();
					lons[i] = Math.max(-180, Math.min(180, lons[i]));
				}
				case 1 -> { // near a pole
					lats[i] = (random.nextBoolean() ? 1 : -1) * (89 + random.nextDouble());
					lons[i] = 360 * random.nextDouble() - 180;
				}
				case 2 -> { // a duplicate of an earlier point
					lats[i] = lats[i / 2];
					lons[i] = lons[i / 2];
				}
				default -> {
					lats[i] = Math.toDegrees(Math.asin(2 * random.nextDouble() - 1));
					lons[i] = 360 * random.nextDouble() - 180;
				}
			}
		}
		NearestPlaceIndex index = new NearestPlaceIndex(lats, lons);
		for (int q = 0; q < 1_000; q++) {
			double lat = (q % 4 == 0) ? lats[random.nextInt(n)] : 180 * random.nextDouble() - 90;
			double lon = (q % 4 == 0) ? lons[random.nextInt(n)] : 360 * random.nextDouble() - 180;
			int found = index.nearest(lat, lon);
			double scanned = Double.POSITIVE_INFINITY;
			for (int i = 0; i < n; i++) {
				scanned = Math.min(scanned, GreatCircle.distanceKm(lats[i], lons[i], lat, lon));
			}
			assertThat(GreatCircle.distanceKm(lats[found], lons[found], lat, lon)).as("nearest to (%s, %s)", lat, lon)
				.isCloseTo(scanned, within(1e-6));
		}
	}

	@Test
	void answersWithTheLowestNumberAmongPointsAtTheSameSpot() {
		NearestPlaceIndex index = new NearestPlaceIndex(new double[] { 10, 20, 20, 20, 30 },
				new double[] { 10, 20, 20, 20, 30 });
		assertThat(index.nearest(20, 20)).isEqualTo(1);
	}

	@Test
	void treatsEveryLongitudeAtAPoleAsTheSamePoint() {
		NearestPlaceIndex index = new NearestPlaceIndex(new double[] { 89.9, 89.9 }, new double[] { 0, 180 });
		assertThat(index.nearest(90, 0)).isEqualTo(index.nearest(90, 123)).isZero();
		assertThat(index.nearest(89.95, 179)).isEqualTo(1);
	}

	@Test
	void refusesToSearchAnEmptyIndex() {
		NearestPlaceIndex index = new NearestPlaceIndex(new double[0], new double[0]);
		assertThatIllegalStateException().isThrownBy(() -> index.nearest(0, 0));
	}

}
