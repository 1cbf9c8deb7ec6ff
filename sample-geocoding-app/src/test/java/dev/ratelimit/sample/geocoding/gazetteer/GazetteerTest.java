package dev.ratelimit.sample.geocoding.gazetteer;

import java.util.Comparator;
import java.util.List;
import java.util.Random;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.assertj.core.api.Assertions.within;

class GazetteerTest {

	private static Gazetteer gazetteer;

	@BeforeAll
	static void loadShippedGazetteer() {
		gazetteer = Gazetteer.loadFromClasspath(Gazetteer.DEFAULT_RESOURCE);
	}

	@Test
	void loadsTheWholeShippedGazetteer() {
		assertThat(gazetteer.size()).isGreaterThan(150_000);
	}

	@Test
	void findsRabatInMorocco() {
		List<Place> matches = gazetteer.search("Rabat", "MA", 10);
		assertThat(matches).first().satisfies((rabat) -> {
			assertThat(rabat.name()).isEqualTo("Rabat");
			assertThat(rabat.country()).isEqualTo("MA");
			assertThat(rabat.lat()).isCloseTo(34.01, within(0.05));
			assertThat(rabat.lon()).isCloseTo(-6.83, within(0.05));
		});
	}

	@Test
	void findsCasablanca() {
		assertThat(gazetteer.search("Casablanca", null, 10)).extracting(Place::country).contains("MA", "CL", "CU");
		assertThat(gazetteer.search("casablanca", "ma", 1)).singleElement()
			.satisfies((casablanca) -> assertThat(casablanca.lat()).isCloseTo(33.59, within(0.05)));
	}

	@Test
	void findsSaoPauloWithoutAccents() {
		Place saoPaulo = gazetteer.search("sao paulo", null, 10).get(0);
		assertThat(saoPaulo.name()).isEqualTo("São Paulo");
		assertThat(saoPaulo.country()).isEqualTo("BR");
	}

	@Test
	void ignoresCaseAndAccentsAlike() {
		List<Place> expected = gazetteer.search("São Paulo", null, 10);
		assertThat(gazetteer.search("SAO PAULO", null, 10)).isEqualTo(expected);
		assertThat(gazetteer.search("sÃo pAulo", null, 10)).isEqualTo(expected);
		assertThat(gazetteer.search("  são   paulo ", null, 10)).isEqualTo(expected);
	}

	@Test
	void listsExactMatchesBeforePrefixMatches() {
		List<Place> matches = gazetteer.search("sao paulo", null, 20);
		assertThat(matches).extracting(Place::name)
			.startsWith("São Paulo", "São Paulo", "São Paulo")
			.contains("São Paulo de Olivença");
		int lastExact = lastIndexNamed(matches, "São Paulo");
		assertThat(matches.subList(lastExact + 1, matches.size()))
			.allSatisfy((place) -> assertThat(place.name()).startsWith("São Paulo ").isNotEqualTo("São Paulo"));
	}

	@Test
	void prefersTheQuerysExactSpellingAmongExactMatches() {
		Gazetteer small = Gazetteer.of(List.of(new Place("São Paulo", "BR", "27", -23.5475, -46.63611),
				new Place("Sao Paulo", "AA", "", 0, 0), new Place("São Paulo de Olivença", "BR", "04", -3.4, -68.9)));
		assertThat(small.search("São Paulo", null, 10)).extracting(Place::country).containsExactly("BR", "AA", "BR");
		assertThat(small.search("sao paulo", null, 10)).extracting(Place::country).containsExactly("AA", "BR", "BR");
	}

	@Test
	void refusesAnEmptyListOfPlaces() {
		assertThatIllegalArgumentException().isThrownBy(() -> Gazetteer.of(List.of()))
			.withMessageContaining("at least one place");
	}

	@Test
	void listsShorterPrefixMatchesFirst() {
		List<Place> matches = gazetteer.search("Rab", null, 30);
		assertThat(matches).extracting((place) -> NameFolding.fold(place.name()))
			.allSatisfy((key) -> assertThat(key).startsWith("rab"))
			.isSortedAccordingTo(Comparator.comparingInt(String::length));
	}

	@Test
	void ordersMatchesDeterministically() {
		assertThat(gazetteer.search("Paris", null, 10)).isEqualTo(gazetteer.search("paris", null, 10));
		assertThat(gazetteer.search("Paris", null, 10)).extracting(Place::country).startsWith("CA", "FR", "US");
	}

	@Test
	void keepsOnlyTheRequestedCountry() {
		assertThat(gazetteer.search("San", "MX", 50)).hasSize(50)
			.allSatisfy((place) -> assertThat(place.country()).isEqualTo("MX"));
		assertThat(gazetteer.search("Rabat", "MT", 10)).extracting(Place::country).containsOnly("MT");
		assertThat(gazetteer.search("Rabat", "JP", 10)).isEmpty();
	}

	@Test
	void returnsAtMostTheLimit() {
		assertThat(gazetteer.search("a", null, 7)).hasSize(7);
		assertThat(gazetteer.search("Rabat", null, 1)).hasSize(1);
	}

	@Test
	void findsNothingForUnknownOrPunctuationOnlyQueries() {
		assertThat(gazetteer.search("Xqzzyvillezz", null, 10)).isEmpty();
		assertThat(gazetteer.search("--", null, 10)).isEmpty();
	}

	@Test
	void rejectsALimitBelowOne() {
		assertThatIllegalArgumentException().isThrownBy(() -> gazetteer.search("Rabat", null, 0))
			.withMessageContaining("limit");
	}

	@Test
	void reverseGeocodesRabat() {
		Place nearest = gazetteer.nearest(34.0209, -6.8416);
		assertThat(nearest.name()).isEqualTo("Rabat");
		assertThat(nearest.country()).isEqualTo("MA");
		assertThat(nearest.distanceKmTo(34.0209, -6.8416)).isCloseTo(1.19, within(0.01));
	}

	@Test
	void reverseGeocodesAcrossTheAntimeridian() {
		// West of the antimeridian; the nearest town, Labasa in Fiji, is east of it at
		// 179.36.
		Place nearest = gazetteer.nearest(-16.4, -179.9);
		assertThat(nearest.name()).isEqualTo("Labasa");
		assertThat(nearest.country()).isEqualTo("FJ");
		assertThat(nearest.distanceKmTo(-16.4, -179.9)).isCloseTo(78.5, within(0.1));
		assertThat(gazetteer.nearest(65.5, 180).name()).isEqualTo(gazetteer.nearest(65.5, -180).name());
	}

	@Test
	void reverseGeocodesThePoles() {
		assertThat(gazetteer.nearest(90, 0).name()).isEqualTo("Longyearbyen");
		assertThat(gazetteer.nearest(90, -135)).isEqualTo(gazetteer.nearest(90, 45));
		assertThat(gazetteer.nearest(-90, 0).name()).isEqualTo("Puerto Williams");
	}

	@Test
	void reverseGeocodingMatchesAScanOfEveryPlace() {
		List<Place> places = gazetteer.places();
		UnitVectors vectors = new UnitVectors(places);
		Random random = new Random(20240601);
		for (int i = 0; i < 300; i++) {
			double lat = Math.toDegrees(Math.asin(2 * random.nextDouble() - 1));
			double lon = 360 * random.nextDouble() - 180;
			if (i % 3 == 0) {
				// Also probe close to real places, where neighbours are dense.
				Place near = places.get(random.nextInt(places.size()));
				lat = Math.max(-90, Math.min(90, near.lat() + random.nextGaussian() * 0.05));
				lon = Math.max(-180, Math.min(180, near.lon() + random.nextGaussian() * 0.05));
			}
			Place scanned = places.get(vectors.nearestByScan(lat, lon));
			assertThat(gazetteer.nearest(lat, lon).distanceKmTo(lat, lon)).as("nearest to (%s, %s)", lat, lon)
				.isCloseTo(scanned.distanceKmTo(lat, lon), within(1e-6));
		}
	}

	@Test
	void rejectsCoordinatesOffTheGlobe() {
		assertThatIllegalArgumentException().isThrownBy(() -> gazetteer.nearest(95, 0)).withMessageContaining("lat");
		assertThatIllegalArgumentException().isThrownBy(() -> gazetteer.nearest(0, 200)).withMessageContaining("lon");
		assertThatIllegalArgumentException().isThrownBy(() -> gazetteer.nearest(Double.NaN, 0));
	}

	/** Unit vectors of places, for a plain scan that is fast enough to run 300 times. */
	private static final class UnitVectors {

		private final double[][] vectors;

		UnitVectors(List<Place> places) {
			this.vectors = places.stream().map((place) -> of(place.lat(), place.lon())).toArray(double[][]::new);
		}

		int nearestByScan(double lat, double lon) {
			double[] q = of(lat, lon);
			int nearest = 0;
			double nearestDot = Double.NEGATIVE_INFINITY;
			for (int i = 0; i < this.vectors.length; i++) {
				double[] v = this.vectors[i];
				// The largest dot product is the smallest angle.
				double dot = v[0] * q[0] + v[1] * q[1] + v[2] * q[2];
				if (dot > nearestDot) {
					nearestDot = dot;
					nearest = i;
				}
			}
			return nearest;
		}

		private static double[] of(double lat, double lon) {
			double phi = Math.toRadians(lat);
			double lambda = Math.toRadians(lon);
			return new double[] { Math.cos(phi) * Math.cos(lambda), Math.cos(phi) * Math.sin(lambda), Math.sin(phi) };
		}

	}

	private static int lastIndexNamed(List<Place> places, String name) {
		int last = -1;
		for (int i = 0; i < places.size(); i++) {
			if (places.get(i).name().equals(name)) {
				last = i;
			}
		}
		return last;
	}

}
