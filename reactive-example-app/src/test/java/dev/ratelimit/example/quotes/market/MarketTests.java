package dev.ratelimit.example.quotes.market;

import java.math.BigDecimal;
import java.util.List;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * The simulated market: quotes at the reference price, and ticks that walk from it the
 * same way on every stream of a symbol.
 */
class MarketTests {

	private final Market market = Market.simulated();

	@Test
	void quotesAListingAtItsReferencePriceWhateverTheCaseOfItsSymbol() {
		assertThat(this.market.quote("acme"))
			.isEqualTo(new Quote("ACME", "Acme Corporation", new BigDecimal("142.50"), "USD"));
	}

	@Test
	void refusesASymbolThatNoListingHas() {
		assertThatExceptionOfType(UnknownSymbolException.class).isThrownBy(() -> this.market.quote("NOPE"))
			.withMessage("No listing has the symbol 'NOPE'");
		assertThatExceptionOfType(UnknownSymbolException.class)
			.isThrownBy(() -> this.market.ticks("NOPE").blockFirst());
	}

	@Test
	void everyStreamOfASymbolWalksTheSameWayFromItsReferencePrice() {
		List<Tick> first = this.market.ticks("ACME").take(50).collectList().block();
		List<Tick> second = this.market.ticks("ACME").take(50).collectList().block();
		assertThat(first).isEqualTo(second);
		assertThat(first.get(0)).isEqualTo(new Tick("ACME", 0, new BigDecimal("142.50")));
		assertThat(first).extracting(Tick::sequence).startsWith(0L, 1L, 2L).endsWith(49L);
		for (int i = 1; i < first.size(); i++) {
			BigDecimal previous = first.get(i - 1).price();
			BigDecimal step = first.get(i).price().subtract(previous).abs();
			assertThat(step).isLessThanOrEqualTo(previous.multiply(new BigDecimal("0.004")));
		}
	}

	@Test
	void listsTheSymbolsInTheOrderOfItsListings() {
		assertThat(this.market.symbols()).containsExactly("ACME", "GLOBEX", "HOOLI", "INITECH", "UMBRELLA");
	}

}
