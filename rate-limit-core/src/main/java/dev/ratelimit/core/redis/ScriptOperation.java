package dev.ratelimit.core.redis;

/**
 * The operations of the decision script, sent as its first argument; the header of its
 * {@code lua/prelude.lua} lists the same codes (held to this enum by
 * {@code ScriptOperationTest}).
 */
enum ScriptOperation {

	/** Evaluate every key, then apply all if all allow, else record first sight. */
	ACQUIRE("a"),

	/**
	 * Evaluate every key and record first sight, applying nothing: a cluster's slots
	 * after a rejected one.
	 */
	SEE("s"),

	/** Evaluate only, writing nothing. */
	EVALUATE("e"),

	/**
	 * Take from each key between what its two-tier reservoir needs and what it may hold,
	 * as many as its limit allows now, if every key allows what it needs.
	 */
	FILL_RESERVOIR("l"),

	/** Give back what an {@link #ACQUIRE} took, from its marks or lease members. */
	REFUND("r"),

	/** Push a concurrency lease's expiry a lease time on. */
	RENEW("n");

	private final String code;

	ScriptOperation(String code) {
		this.code = code;
	}

	/**
	 * Returns the code the script reads in {@code ARGV[1]}.
	 * @return the code
	 */
	String code() {
		return this.code;
	}

}
