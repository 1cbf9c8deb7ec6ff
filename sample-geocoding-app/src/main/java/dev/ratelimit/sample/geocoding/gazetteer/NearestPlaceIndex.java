package dev.ratelimit.sample.geocoding.gazetteer;

/**
 * A static k-d tree over points on the unit sphere, answering "which point is nearest to
 * this one?" by great-circle distance. A query visits O(log n) nodes for well-spread
 * data; building takes O(n log n).
 */
final class NearestPlaceIndex {

	/*
	 * Each latitude/longitude becomes a unit vector (x, y, z). The chord distance between
	 * two unit vectors grows monotonically with their great-circle distance, so the
	 * nearest point in 3-D is the nearest on the globe, with no seam at the antimeridian
	 * and no crowding at the poles.
	 *
	 * The tree is implicit: the node for the range [lo, hi) sits at mid = (lo + hi) >>>
	 * 1; all of [lo, mid) lies on or below its coordinate on the node's split axis, all
	 * of (mid, hi) on or above.
	 */
	private final double[][] axes;

	private final double[] x;

	private final double[] y;

	private final double[] z;

	/** The caller's point number for each tree position. */
	private final int[] points;

	/** The split axis (0 = x, 1 = y, 2 = z) of the node at each tree position. */
	private final byte[] splitAxis;

	/**
	 * Builds the index. Point {@code i} is {@code (lats[i], lons[i])}; {@link #nearest}
	 * answers with these numbers.
	 */
	NearestPlaceIndex(double[] lats, double[] lons) {
		if (lats.length != lons.length) {
			throw new IllegalArgumentException(
					"lats and lons must have the same length, but have " + lats.length + " and " + lons.length);
		}
		int n = lats.length;
		this.x = new double[n];
		this.y = new double[n];
		this.z = new double[n];
		this.points = new int[n];
		this.splitAxis = new byte[n];
		this.axes = new double[][] { this.x, this.y, this.z };
		for (int i = 0; i < n; i++) {
			double[] v = unitVector(lats[i], lons[i]);
			this.x[i] = v[0];
			this.y[i] = v[1];
			this.z[i] = v[2];
			this.points[i] = i;
		}
		build(0, n);
	}

	int size() {
		return this.points.length;
	}

	/**
	 * Returns the number of the point nearest to {@code (lat, lon)}; among points at
	 * exactly the same distance, the lowest number.
	 * @throws IllegalStateException if the index is empty
	 */
	int nearest(double lat, double lon) {
		if (this.points.length == 0) {
			throw new IllegalStateException("The index holds no points");
		}
		Search search = new Search(unitVector(lat, lon));
		search.visit(0, this.points.length);
		return search.bestPoint;
	}

	/**
	 * Returns the unit vector of a latitude/longitude. At the poles {@code cos(lat)} is
	 * set to exactly 0, because {@code Math.cos(Math.PI / 2)} is 6e-17, not 0, which
	 * would make a pole depend on the longitude given with it.
	 */
	private static double[] unitVector(double lat, double lon) {
		double phi = Math.toRadians(lat);
		double lambda = Math.toRadians(lon);
		double cosPhi = (Math.abs(lat) == 90) ? 0 : Math.cos(phi);
		return new double[] { cosPhi * Math.cos(lambda), cosPhi * Math.sin(lambda), Math.sin(phi) };
	}

	private void build(int lo, int hi) {
		while (hi - lo > 1) {
			int mid = (lo + hi) >>> 1;
			int axis = widestAxis(lo, hi);
			select(lo, hi, mid, this.axes[axis]);
			this.splitAxis[mid] = (byte) axis;
			build(lo, mid);
			lo = mid + 1;
		}
	}

	private int widestAxis(int lo, int hi) {
		int widest = 0;
		double widestSpread = -1;
		for (int axis = 0; axis < 3; axis++) {
			double[] c = this.axes[axis];
			double min = Double.POSITIVE_INFINITY;
			double max = Double.NEGATIVE_INFINITY;
			for (int i = lo; i < hi; i++) {
				min = Math.min(min, c[i]);
				max = Math.max(max, c[i]);
			}
			if (max - min > widestSpread) {
				widestSpread = max - min;
				widest = axis;
			}
		}
		return widest;
	}

	/**
	 * Reorders {@code [lo, hi)} so that position {@code k} holds the value that would sit
	 * there if the range were sorted on {@code c}, with nothing larger before it and
	 * nothing smaller after it. A three-way partition keeps this linear when many places
	 * share a coordinate.
	 */
	private void select(int lo, int hi, int k, double[] c) {
		while (hi - lo > 1) {
			double pivot = medianOfThree(c[lo], c[(lo + hi) >>> 1], c[hi - 1]);
			int less = lo;
			int greater = hi;
			int i = lo;
			while (i < greater) {
				if (c[i] < pivot) {
					swap(less++, i++);
				}
				else if (c[i] > pivot) {
					swap(i, --greater);
				}
				else {
					i++;
				}
			}
			if (k < less) {
				hi = less;
			}
			else if (k >= greater) {
				lo = greater;
			}
			else {
				return;
			}
		}
	}

	private static double medianOfThree(double a, double b, double c) {
		return Math.max(Math.min(a, b), Math.min(Math.max(a, b), c));
	}

	private void swap(int i, int j) {
		double t = this.x[i];
		this.x[i] = this.x[j];
		this.x[j] = t;
		t = this.y[i];
		this.y[i] = this.y[j];
		this.y[j] = t;
		t = this.z[i];
		this.z[i] = this.z[j];
		this.z[j] = t;
		int p = this.points[i];
		this.points[i] = this.points[j];
		this.points[j] = p;
	}

	private final class Search {

		private final double[] query;

		private double bestDistanceSquared = Double.POSITIVE_INFINITY;

		private int bestPoint = -1;

		Search(double[] query) {
			this.query = query;
		}

		void visit(int lo, int hi) {
			while (lo < hi) {
				int mid = (lo + hi) >>> 1;
				consider(mid);
				if (hi - lo == 1) {
					return;
				}
				int axis = NearestPlaceIndex.this.splitAxis[mid];
				double offset = this.query[axis] - NearestPlaceIndex.this.axes[axis][mid];
				int nearLo = (offset < 0) ? lo : mid + 1;
				int nearHi = (offset < 0) ? mid : hi;
				int farLo = (offset < 0) ? mid + 1 : lo;
				int farHi = (offset < 0) ? hi : mid;
				visit(nearLo, nearHi);
				// Every point across the split plane is at least |offset| away. Ties (<=)
				// are
				// still visited so that the lowest point number wins, as documented.
				if (offset * offset > this.bestDistanceSquared) {
					return;
				}
				lo = farLo;
				hi = farHi;
			}
		}

		private void consider(int position) {
			double dx = NearestPlaceIndex.this.x[position] - this.query[0];
			double dy = NearestPlaceIndex.this.y[position] - this.query[1];
			double dz = NearestPlaceIndex.this.z[position] - this.query[2];
			double distanceSquared = dx * dx + dy * dy + dz * dz;
			int point = NearestPlaceIndex.this.points[position];
			if (distanceSquared < this.bestDistanceSquared
					|| (distanceSquared == this.bestDistanceSquared && point < this.bestPoint)) {
				this.bestDistanceSquared = distanceSquared;
				this.bestPoint = point;
			}
		}

	}

}
