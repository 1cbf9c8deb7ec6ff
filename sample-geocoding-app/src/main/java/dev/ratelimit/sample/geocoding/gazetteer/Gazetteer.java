package dev.ratelimit.sample.geocoding.gazetteer;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.PriorityQueue;
import java.util.stream.IntStream;
import java.util.zip.GZIPInputStream;

import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * An immutable, in-memory world gazetteer: finds places by {@linkplain NameFolding
 * folded} name and the place nearest to a coordinate, with a {@link NearestPlaceIndex k-d
 * tree on the unit sphere}. Safe for use by many threads.
 */
public final class Gazetteer {

	/** The classpath location of the gazetteer shipped with the sample. */
	public static final String DEFAULT_RESOURCE = "gazetteer/cities.tsv.gz";

	private static final Logger logger = LoggerFactory.getLogger(Gazetteer.class);

	private static final String HEADER = "name\tcountry\tadmin1\tlat\tlon";

	private static final Comparator<Place> TIE_BREAK = Comparator.comparing(Place::country)
		.thenComparing(Place::admin1)
		.thenComparing(Place::name)
		.thenComparingDouble(Place::lat)
		.thenComparingDouble(Place::lon);

	private final Place[] places;

	// All folded names are held sorted, so the places whose name equals the query, and
	// after them
	// those whose name starts with it, form one contiguous run found by binary search.
	/**
	 * Folded names in ascending order; {@code placeByKey[i]} is the place of
	 * {@code sortedKeys[i]}.
	 */
	private final String[] sortedKeys;

	private final int[] placeByKey;

	private final NearestPlaceIndex nearestIndex;

	private Gazetteer(List<Place> places) {
		if (places.isEmpty()) {
			throw new IllegalArgumentException("A gazetteer needs at least one place");
		}
		this.places = places.toArray(new Place[0]);
		if (!isSorted(this.places)) {
			Arrays.parallelSort(this.places, TIE_BREAK);
		}
		int n = this.places.length;
		NameKey[] nameKeys = new NameKey[n];
		IntStream.range(0, n)
			.parallel()
			.forEach((i) -> nameKeys[i] = new NameKey(NameFolding.fold(this.places[i].name()), i));
		// A stable sort by key alone: places with the same key stay in TIE_BREAK order.
		Arrays.parallelSort(nameKeys, Comparator.comparing(NameKey::key));
		this.sortedKeys = new String[n];
		this.placeByKey = new int[n];
		for (int i = 0; i < n; i++) {
			this.sortedKeys[i] = nameKeys[i].key();
			this.placeByKey[i] = nameKeys[i].place();
		}
		double[] lats = new double[n];
		double[] lons = new double[n];
		for (int i = 0; i < n; i++) {
			lats[i] = this.places[i].lat();
			lons[i] = this.places[i].lon();
		}
		this.nearestIndex = new NearestPlaceIndex(lats, lons);
	}

	private static boolean isSorted(Place[] places) {
		for (int i = 1; i < places.length; i++) {
			if (TIE_BREAK.compare(places[i - 1], places[i]) > 0) {
				return false;
			}
		}
		return true;
	}

	/**
	 * Creates a gazetteer of the given places.
	 * @param places the places, at least one
	 * @return the gazetteer
	 */
	public static Gazetteer of(List<Place> places) {
		for (Place place : places) {
			checkCoordinates(place.lat(), place.lon());
		}
		return new Gazetteer(List.copyOf(places));
	}

	/**
	 * Loads the gazetteer from a gzip-compressed TSV file on the classpath, with a header
	 * row and the columns {@code name, country, admin1, lat, lon}.
	 * @param resource the classpath location, such as {@link #DEFAULT_RESOURCE}
	 * @return the gazetteer
	 * @throws UncheckedIOException if the resource is missing or cannot be read
	 * @throws IllegalArgumentException if the file is malformed
	 */
	public static Gazetteer loadFromClasspath(String resource) {
		long start = System.nanoTime();
		ClassLoader classLoader = Gazetteer.class.getClassLoader();
		try (InputStream in = classLoader.getResourceAsStream(resource)) {
			if (in == null) {
				throw new UncheckedIOException(new IOException("Gazetteer resource '" + resource
						+ "' is not on the classpath; regenerate it with data/derive-gazetteer.sh"));
			}
			Gazetteer gazetteer = new Gazetteer(read(in, resource));
			long millis = (System.nanoTime() - start) / 1_000_000;
			logger.info("Loaded {} places from {} in {} ms", gazetteer.size(), resource, millis);
			return gazetteer;
		}
		catch (IOException ex) {
			throw new UncheckedIOException("Could not read gazetteer resource '" + resource + "'", ex);
		}
	}

	private static List<Place> read(InputStream compressed, String source) throws IOException {
		BufferedReader reader = new BufferedReader(
				new InputStreamReader(new GZIPInputStream(compressed, 1 << 16), StandardCharsets.UTF_8), 1 << 16);
		String header = reader.readLine();
		if (!HEADER.equals(header)) {
			throw new IllegalArgumentException(source + " must start with the header '" + HEADER.replace("\t", "\\t")
					+ "', but starts with '" + header + "'");
		}
		// Country and admin1 codes repeat across the file; sharing them saves memory.
		Map<String, String> codes = new HashMap<>();
		List<Place> places = new ArrayList<>(180_000);
		String line;
		int lineNumber = 1;
		while ((line = reader.readLine()) != null) {
			lineNumber++;
			places.add(parse(line, codes, source, lineNumber));
		}
		return places;
	}

	private static Place parse(String line, Map<String, String> codes, String source, int lineNumber) {
		String[] fields = new String[5];
		int start = 0;
		for (int i = 0; i < 4; i++) {
			int tab = line.indexOf('\t', start);
			if (tab < 0) {
				throw malformed(source, lineNumber, "has " + (i + 1) + " fields, expected 5");
			}
			fields[i] = line.substring(start, tab);
			start = tab + 1;
		}
		fields[4] = line.substring(start);
		if (fields[0].isEmpty() || fields[4].indexOf('\t') >= 0) {
			throw malformed(source, lineNumber, "needs a name and exactly 5 fields");
		}
		double lat;
		double lon;
		try {
			lat = Double.parseDouble(fields[3]);
			lon = Double.parseDouble(fields[4]);
			checkCoordinates(lat, lon);
		}
		catch (IllegalArgumentException ex) {
			throw malformed(source, lineNumber, "has a bad coordinate: " + ex.getMessage());
		}
		return new Place(fields[0], codes.computeIfAbsent(fields[1], (code) -> code),
				codes.computeIfAbsent(fields[2], (code) -> code), lat, lon);
	}

	private static IllegalArgumentException malformed(String source, int lineNumber, String problem) {
		return new IllegalArgumentException(source + " line " + lineNumber + " " + problem);
	}

	private static void checkCoordinates(double lat, double lon) {
		if (!(lat >= -90 && lat <= 90)) {
			throw new IllegalArgumentException("lat must be between -90 and 90, but was " + lat);
		}
		if (!(lon >= -180 && lon <= 180)) {
			throw new IllegalArgumentException("lon must be between -180 and 180, but was " + lon);
		}
	}

	/**
	 * Every place, in tie-break order; for tests that check the indexes against a plain
	 * scan.
	 */
	List<Place> places() {
		return List.of(this.places);
	}

	/**
	 * Returns the number of places.
	 * @return the number of places
	 */
	public int size() {
		return this.places.length;
	}

	private record NameKey(String key, int place) {
	}

	/**
	 * Finds places by name, ignoring case, accents and punctuation: first the places
	 * whose whole name matches, then those whose name starts with the query. The data
	 * carry no population, so within a group: exact matches spelled as the query (accents
	 * included) before other exact matches, then by country, admin1 code, name and
	 * coordinates; prefix matches shorter names first, then by folded name and the same
	 * keys.
	 * @param query the name or the start of a name, such as {@code sao paulo}
	 * @param country an ISO 3166-1 alpha-2 code to keep only places in that country (any
	 * case), or {@code null} for all countries
	 * @param limit the largest number of places to return, at least 1
	 * @return the matches, best first; empty if none, or if the query has no letters or
	 * digits
	 */
	public List<Place> search(String query, @Nullable String country, int limit) {
		if (limit < 1) {
			throw new IllegalArgumentException("limit must be at least 1, but was " + limit);
		}
		String key = NameFolding.fold(query);
		if (key.isEmpty()) {
			return List.of();
		}
		String countryCode = (country != null) ? country.toUpperCase(Locale.ROOT) : null;
		int from = firstKeyNotBelow(key);
		int exactEnd = from;
		while (exactEnd < this.sortedKeys.length && this.sortedKeys[exactEnd].equals(key)) {
			exactEnd++;
		}
		List<Place> matches = exactMatches(from, exactEnd, query, countryCode, limit);
		if (matches.size() < limit) {
			matches.addAll(prefixMatches(exactEnd, key, countryCode, limit - matches.size()));
		}
		return matches;
	}

	private List<Place> exactMatches(int from, int to, String query, @Nullable String country, int limit) {
		String spelled = query.strip().toLowerCase(Locale.ROOT);
		List<Place> literal = new ArrayList<>();
		List<Place> folded = new ArrayList<>();
		for (int i = from; i < to; i++) {
			Place place = this.places[this.placeByKey[i]];
			if (country == null || country.equals(place.country())) {
				(place.name().toLowerCase(Locale.ROOT).equals(spelled) ? literal : folded).add(place);
			}
		}
		literal.addAll(folded);
		return new ArrayList<>(literal.subList(0, Math.min(limit, literal.size())));
	}

	/**
	 * Returns the best {@code limit} places after {@code from} whose key starts with
	 * {@code key}: shortest key first, then in index order. A bounded heap keeps this O(m
	 * log limit) for the m names sharing the prefix.
	 */
	private List<Place> prefixMatches(int from, String key, @Nullable String country, int limit) {
		int to = firstKeyWithoutPrefix(from, key);
		Comparator<Integer> better = Comparator.comparingInt((Integer i) -> this.sortedKeys[i].length())
			.thenComparingInt((i) -> i);
		PriorityQueue<Integer> best = new PriorityQueue<>(limit + 1, better.reversed());
		for (int i = from; i < to; i++) {
			if (country != null && !country.equals(this.places[this.placeByKey[i]].country())) {
				continue;
			}
			if (best.size() == limit) {
				if (better.compare(i, best.peek()) >= 0) {
					continue;
				}
				best.poll();
			}
			best.add(i);
		}
		Integer[] chosen = best.toArray(new Integer[0]);
		Arrays.sort(chosen, better);
		List<Place> matches = new ArrayList<>(chosen.length);
		for (Integer i : chosen) {
			matches.add(this.places[this.placeByKey[i]]);
		}
		return matches;
	}

	private int firstKeyNotBelow(String key) {
		int lo = 0;
		int hi = this.sortedKeys.length;
		while (lo < hi) {
			int mid = (lo + hi) >>> 1;
			if (this.sortedKeys[mid].compareTo(key) < 0) {
				lo = mid + 1;
			}
			else {
				hi = mid;
			}
		}
		return lo;
	}

	/**
	 * Keys from {@code from} on that start with {@code prefix} come first, then the
	 * others.
	 */
	private int firstKeyWithoutPrefix(int from, String prefix) {
		int lo = from;
		int hi = this.sortedKeys.length;
		while (lo < hi) {
			int mid = (lo + hi) >>> 1;
			if (this.sortedKeys[mid].startsWith(prefix)) {
				lo = mid + 1;
			}
			else {
				hi = mid;
			}
		}
		return lo;
	}

	/**
	 * Returns the place nearest to a point by great-circle distance.
	 * @param lat the latitude in degrees, -90 to 90
	 * @param lon the longitude in degrees, -180 to 180
	 * @return the nearest place; of places at exactly the same distance, the first by
	 * country, admin1 code, name and coordinates
	 * @throws IllegalArgumentException if a coordinate is out of range or not a number
	 */
	public Place nearest(double lat, double lon) {
		checkCoordinates(lat, lon);
		return this.places[this.nearestIndex.nearest(lat, lon)];
	}

}
