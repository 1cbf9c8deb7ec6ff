package dev.ratelimit.sample.geocoding.gazetteer;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class NameFoldingTest {

	@Test
	void ignoresCaseAndAccents() {
		assertThat(NameFolding.fold("São Paulo")).isEqualTo("sao paulo");
		assertThat(NameFolding.fold("SAO PAULO")).isEqualTo("sao paulo");
		assertThat(NameFolding.fold("SÃO PAULO")).isEqualTo("sao paulo");
		assertThat(NameFolding.fold("Zürich")).isEqualTo("zurich");
	}

	@Test
	void spellsOutLettersThatDoNotDecompose() {
		assertThat(NameFolding.fold("Łódź")).isEqualTo("lodz");
		assertThat(NameFolding.fold("Tromsø")).isEqualTo("tromso");
		assertThat(NameFolding.fold("Großbeeren")).isEqualTo("grossbeeren");
		assertThat(NameFolding.fold("İzmir")).isEqualTo("izmir");
	}

	@Test
	void dropsApostrophesAndTurnsOtherPunctuationIntoSingleSpaces() {
		assertThat(NameFolding.fold("Būr Sa‘īd")).isEqualTo("bur said");
		assertThat(NameFolding.fold("Val-d'Or")).isEqualTo("val dor");
		assertThat(NameFolding.fold("  Aix-en-Provence ")).isEqualTo("aix en provence");
		assertThat(NameFolding.fold("St.  Louis")).isEqualTo("st louis");
	}

	@Test
	void keepsLettersOfOtherScripts() {
		assertThat(NameFolding.fold("Москва")).isEqualTo("москва");
	}

	@Test
	void foldsPunctuationOnlyToAnEmptyKey() {
		assertThat(NameFolding.fold(" -'! ")).isEmpty();
	}

}
