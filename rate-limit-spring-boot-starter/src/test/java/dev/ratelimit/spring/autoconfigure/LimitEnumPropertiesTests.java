package dev.ratelimit.spring.autoconfigure;

import java.io.IOException;
import java.time.ZoneId;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.stream.Stream;

import com.jayway.jsonpath.JsonPath;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.context.properties.source.MapConfigurationPropertySource;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.core.env.MapPropertySource;

import dev.ratelimit.core.Algorithm;
import dev.ratelimit.core.LeakMode;
import dev.ratelimit.core.Limit;
import dev.ratelimit.core.WindowAlignment;
import dev.ratelimit.spring.PolicyRegistry;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.params.provider.Arguments.arguments;

/**
 * A limit's {@code algorithm} and {@code mode} are enums, so that IDEs offer their
 * values: every spelling accepted while they were text still starts the same limit, and
 * the configuration metadata lists the values.
 */
class LimitEnumPropertiesTests {

	private static final String LIMIT = "ratelimit.policies.api.limits[0].";

	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(RateLimitAutoConfiguration.class));

	/**
	 * The spellings the configuration name parser took: any case, '_' for '-', blanks and
	 * controls around it.
	 */
	static Stream<Arguments> algorithmSpellings() {
		List<Arguments> spellings = new ArrayList<>();
		for (Algorithm algorithm : Algorithm.values()) {
			String name = algorithm.configName();
			for (String spelling : List.of(name, name.toUpperCase(Locale.ROOT), name.replace('-', '_'),
					algorithm.name(), " " + name + " ", name + "\n", name + "\u0000", capitalized(name))) {
				spellings.add(arguments(spelling, algorithm));
			}
		}
		return spellings.stream();
	}

	@ParameterizedTest(name = "\"{0}\" is {1}")
	@MethodSource("algorithmSpellings")
	void startsTheAlgorithmOfEverySpellingAcceptedBefore(String spelling, Algorithm algorithm) {
		Map<String, Object> limit = (algorithm == Algorithm.CONCURRENCY) ? Map.of(LIMIT + "max", "3")
				: Map.of(LIMIT + "rate", "5/1s");
		this.runner
			.withInitializer((context) -> context.getEnvironment()
				.getPropertySources()
				.addFirst(new MapPropertySource("limit", with(limit, LIMIT + "algorithm", spelling))))
			.run((context) -> assertThat(onlyLimit(context.getBean(PolicyRegistry.class)).algorithm())
				.isEqualTo(algorithm));
	}

	@ParameterizedTest(name = "\"{0}\"")
	@ValueSource(strings = { "shape", "SHAPE", "Shape", " shape", "shape\t", "police", "POLICE", "Police\t" })
	void startsTheModeOfEverySpellingAcceptedBefore(String spelling) {
		LeakMode mode = LeakMode.valueOf(spelling.trim().toUpperCase(Locale.ROOT));
		this.runner
			.withInitializer((context) -> context.getEnvironment()
				.getPropertySources()
				.addFirst(new MapPropertySource("limit",
						Map.of(LIMIT + "algorithm", "leaky-bucket", LIMIT + "rate", "5/1s", LIMIT + "mode", spelling))))
			.run((context) -> assertThat(onlyLimit(context.getBean(PolicyRegistry.class)).mode()).isEqualTo(mode));
	}

	@Test
	void defaultsToATokenBucketWithoutAMode() {
		this.runner.withPropertyValues(LIMIT + "rate=5/1s").run((context) -> {
			Limit limit = onlyLimit(context.getBean(PolicyRegistry.class));
			assertThat(limit.algorithm()).isEqualTo(Algorithm.TOKEN_BUCKET);
			assertThat(limit.mode()).isEqualTo(LeakMode.POLICE);
		});
	}

	@Test
	void startsACalendarWindowInItsZone() {
		this.runner
			.withPropertyValues(LIMIT + "algorithm=fixed-window", LIMIT + "rate=100000/1mo", LIMIT + "align=calendar",
					LIMIT + "zone=Europe/Paris")
			.run((context) -> assertThat(onlyLimit(context.getBean(PolicyRegistry.class)))
				.isEqualTo(Limit.builder(Algorithm.FIXED_WINDOW)
					.rate("100000/1mo")
					.align(WindowAlignment.CALENDAR)
					.zone(ZoneId.of("Europe/Paris"))
					.build()));
	}

	@ParameterizedTest
	@ValueSource(strings = { "ratelimit.policies.values.limits", "ratelimit.policies.values.tiers.values" })
	void theMetadataListsEveryAlgorithmAndModeAsConfigurationSpellsThem(String limits) throws IOException {
		String metadata = StarterMetadata.generated();
		List<String> algorithms = JsonPath.read(metadata,
				"$.hints[?(@.name == '" + limits + ".algorithm')].values[*].value");
		assertThat(algorithms)
			.containsExactly(Stream.of(Algorithm.values()).map(Algorithm::configName).toArray(String[]::new));
		algorithms.forEach((value) -> assertThat(bind("algorithm", value).getAlgorithm())
			.isEqualTo(Algorithm.fromConfigName(value)));
		List<String> modes = JsonPath.read(metadata, "$.hints[?(@.name == '" + limits + ".mode')].values[*].value");
		assertThat(modes).containsExactly("police", "shape");
		modes.forEach((value) -> assertThat(bind("mode", value).getMode()).isEqualTo(LeakMode.fromConfigName(value)));
		List<String> alignments = JsonPath.read(metadata,
				"$.hints[?(@.name == '" + limits + ".align')].values[*].value");
		assertThat(alignments).containsExactly("epoch", "calendar");
		alignments.forEach((value) -> assertThat(bind("align", value).getAlign())
			.isEqualTo(WindowAlignment.fromConfigName(value)));
	}

	private static RateLimitProperties.LimitSpec bind(String property, String value) {
		Binder binder = new Binder(new MapConfigurationPropertySource(Map.of(LIMIT + property, value)));
		return binder.bind("ratelimit", RateLimitProperties.class).get().getPolicies().get("api").getLimits().get(0);
	}

	private static Limit onlyLimit(PolicyRegistry registry) {
		assertThat(registry.get("api").limits()).hasSize(1);
		return registry.get("api").limits().get(0);
	}

	private static Map<String, Object> with(Map<String, Object> properties, String name, String value) {
		Map<String, Object> all = new HashMap<>(properties);
		all.put(name, value);
		return all;
	}

	private static String capitalized(String name) {
		StringBuilder capitalized = new StringBuilder();
		for (String word : name.split("-")) {
			capitalized.append(capitalized.isEmpty() ? "" : "-")
				.append(word.substring(0, 1).toUpperCase(Locale.ROOT))
				.append(word.substring(1));
		}
		return capitalized.toString();
	}

}
