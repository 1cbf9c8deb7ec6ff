package dev.ratelimit.example.quotes.market;

/**
 * Thrown for a symbol that no listing of the market has.
 */
public class UnknownSymbolException extends RuntimeException {

	private final String symbol;

	public UnknownSymbolException(String symbol) {
		super("No listing has the symbol '" + symbol + "'");
		this.symbol = symbol;
	}

	/**
	 * Returns the symbol asked for.
	 * @return the symbol
	 */
	public String getSymbol() {
		return this.symbol;
	}

}
