package dev.ratelimit.sample.geocoding.gazetteer;

import java.text.Normalizer;
import java.util.Locale;

/**
 * Folds place names and queries to search keys, so that {@code "SAO PAULO"},
 * {@code "são paulo"} and {@code "São Paulo"} all become {@code "sao paulo"}.
 */
final class NameFolding {

	private NameFolding() {
	}

	// A key is lower-cased, decomposed (NFD) with its combining marks removed, has the
	// few Latin
	// letters that do not decompose (ø, ł, ß, æ, …) spelled out, drops apostrophes and
	// ʻokina-like
	// letters (so Būr Sa‘īd matches bur said), and turns every other run of
	// non-alphanumeric
	// characters into one space (so Aix-en-Provence matches aix en provence).
	static String fold(String text) {
		String lower = text.toLowerCase(Locale.ROOT);
		String decomposed = isAscii(lower) ? lower : Normalizer.normalize(lower, Normalizer.Form.NFD);
		StringBuilder key = new StringBuilder(decomposed.length());
		boolean separatorPending = false;
		for (int i = 0; i < decomposed.length();) {
			int codePoint = decomposed.codePointAt(i);
			i += Character.charCount(codePoint);
			if (isMark(codePoint) || isApostrophe(codePoint)) {
				continue;
			}
			if (!Character.isLetterOrDigit(codePoint)) {
				separatorPending = true;
				continue;
			}
			if (separatorPending && !key.isEmpty()) {
				key.append(' ');
			}
			separatorPending = false;
			appendFoldedLetter(key, codePoint);
		}
		return key.toString();
	}

	private static boolean isAscii(String text) {
		for (int i = 0; i < text.length(); i++) {
			if (text.charAt(i) > 0x7f) {
				return false;
			}
		}
		return true;
	}

	private static boolean isMark(int codePoint) {
		int type = Character.getType(codePoint);
		return type == Character.NON_SPACING_MARK || type == Character.COMBINING_SPACING_MARK
				|| type == Character.ENCLOSING_MARK;
	}

	private static boolean isApostrophe(int codePoint) {
		return switch (codePoint) {
			// ' ` ´ ‘ ’ ʹ ʻ ʼ ʽ ʾ ʿ ˈ
			case 0x27, 0x60, 0xb4, 0x2018, 0x2019, 0x2b9, 0x2bb, 0x2bc, 0x2bd, 0x2be, 0x2bf, 0x2c8 -> true;
			default -> false;
		};
	}

	private static void appendFoldedLetter(StringBuilder key, int codePoint) {
		switch (codePoint) {
			case 'ß' -> key.append("ss");
			case 'æ' -> key.append("ae");
			case 'œ' -> key.append("oe");
			case 'ø' -> key.append('o');
			case 'ł' -> key.append('l');
			case 'đ', 'ð' -> key.append('d');
			case 'þ' -> key.append("th");
			case 'ħ' -> key.append('h');
			case 'ı' -> key.append('i');
			case 'ŧ' -> key.append('t');
			default -> key.appendCodePoint(codePoint);
		}
	}

}
