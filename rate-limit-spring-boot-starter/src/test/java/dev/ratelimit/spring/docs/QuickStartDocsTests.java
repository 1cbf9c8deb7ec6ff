package dev.ratelimit.spring.docs;

import java.nio.file.Path;
import java.util.List;

import javax.xml.parsers.DocumentBuilderFactory;

import org.junit.jupiter.api.Test;
import org.w3c.dom.Document;
import org.w3c.dom.Element;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.webmvc.test.autoconfigure.AutoConfigureMockMvc;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.http.MediaType;
import org.springframework.security.config.annotation.web.builders.HttpSecurity;
import org.springframework.security.web.SecurityFilterChain;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.test.web.servlet.MockMvc;
import org.springframework.test.web.servlet.request.MockHttpServletRequestBuilder;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;

import dev.ratelimit.core.docs.DocExamples;
import dev.ratelimit.spring.annotation.RateLimited;
import dev.ratelimit.spring.testsupport.MutableTimeSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.springframework.test.web.servlet.request.MockMvcRequestBuilders.get;
import static org.springframework.test.web.servlet.request.MockMvcRequestBuilders.post;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.content;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.header;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.jsonPath;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.status;

/**
 * The README's quick start: its YAML, read from the README, and its two handler methods,
 * which this class holds, in a web application on a clock that stands still. Each test
 * uses its own API key.
 */
@SpringBootTest(classes = QuickStartDocsTests.QuickStartApplication.class)
@AutoConfigureMockMvc
class QuickStartDocsTests {

	@DynamicPropertySource
	static void quickStart(DynamicPropertyRegistry registry) {
		DocProperties.register(registry, "README.md", "quick-start");
	}

	@Autowired
	private MockMvc mvc;

	@Test
	void theReadmeShowsTheHandlerMethodsOfThisClass() {
		assertThat(DocExamples.codeMissingFrom(QuickStartDocsTests.class, "README.md", "quick-start-code")).isEmpty();
	}

	@Test
	void theReadmesDependencyIsThisStarter() throws Exception {
		Document shown = parse(DocExamples.block("README.md", "dependency"));
		Document pom = DocumentBuilderFactory.newInstance().newDocumentBuilder().parse(Path.of("pom.xml").toFile());
		Element parent = (Element) pom.getElementsByTagName("parent").item(0);
		assertThat(text(shown.getDocumentElement(), "groupId")).isEqualTo(text(parent, "groupId"));
		assertThat(text(shown.getDocumentElement(), "version")).isEqualTo(text(parent, "version"));
		assertThat(text(shown.getDocumentElement(), "artifactId"))
			.isEqualTo(text(pom.getDocumentElement(), "artifactId"));
	}

	@Test
	void aCallerOverTheSearchBurstGets429WithRetryAfterAndAProblem() throws Exception {
		for (int i = 0; i < 10; i++) {
			this.mvc.perform(search("burst")).andExpect(status().isOk());
		}
		for (int i = 0; i < 2; i++) {
			this.mvc.perform(search("burst"))
				.andExpect(status().isTooManyRequests())
				.andExpect(header().string("Retry-After", "1"))
				.andExpect(content().contentTypeCompatibleWith(MediaType.APPLICATION_PROBLEM_JSON))
				.andExpect(jsonPath("$.status").value(429))
				.andExpect(jsonPath("$['violated-policies'][0]").value("search-burst"));
		}
	}

	@Test
	void aBatchCostsOnePermitOfTheApiPolicyPerQuery() throws Exception {
		this.mvc
			.perform(post("/api/search/batch").header("X-API-Key", "batch")
				.contentType(MediaType.APPLICATION_JSON)
				.content("[\"Rabat\",\"Fes\",\"Tangier\"]"))
			.andExpect(status().isOk())
			.andExpect(jsonPath("$[2][0].name").value("Tangier"))
			.andExpect(header().string("RateLimit", "\"api\";r=57;t=3"));
	}

	@Test
	void everyLimitedResponseCarriesTheDraftAndLegacyHeaders() throws Exception {
		this.mvc.perform(search("headers"))
			.andExpect(status().isOk())
			.andExpect(header().string("RateLimit-Policy", "\"api\";q=60;w=60, \"search-burst\";q=10;w=2"))
			.andExpect(header().string("RateLimit", "\"search-burst\";r=9;t=1"))
			.andExpect(header().string("X-RateLimit-Limit", "10"))
			.andExpect(header().string("X-RateLimit-Remaining", "9"))
			.andExpect(header().string("X-RateLimit-Reset", "1"));
	}

	private static MockHttpServletRequestBuilder search(String apiKey) {
		return get("/api/search").param("q", "Rabat").header("X-API-Key", apiKey);
	}

	private static Document parse(String xml) throws Exception {
		return DocumentBuilderFactory.newInstance()
			.newDocumentBuilder()
			.parse(new org.xml.sax.InputSource(new java.io.StringReader(xml)));
	}

	private static String text(Element element, String child) {
		for (org.w3c.dom.Node node = element.getFirstChild(); node != null; node = node.getNextSibling()) {
			if (node instanceof Element candidate && candidate.getTagName().equals(child)) {
				return candidate.getTextContent().strip();
			}
		}
		throw new IllegalStateException("No <" + child + "> in <" + element.getTagName() + ">");
	}

	@SpringBootConfiguration
	@EnableAutoConfiguration
	@Import(SearchController.class)
	static class QuickStartApplication {

		@Bean
		MutableTimeSource timeSource() {
			return new MutableTimeSource();
		}

		@Bean
		SecurityFilterChain securityFilterChain(HttpSecurity http) throws Exception {
			// Spring Security is on the starter's test class path; the quick start has
			// none
			return http.authorizeHttpRequests((requests) -> requests.anyRequest().permitAll())
				.csrf((csrf) -> csrf.disable())
				.build();
		}

	}

	record Result(String name) {
	}

	@RestController
	static class SearchController {

		@RateLimited("search-burst")
		@GetMapping("/api/search")
		List<Result> search(@RequestParam String q) {
			return List.of(new Result(q));
		}

		@RateLimited(policy = "api", cost = "#{#queries.size()}")
		@PostMapping("/api/search/batch")
		List<List<Result>> batch(@RequestBody List<String> queries) {
			return queries.stream().map((query) -> List.of(new Result(query))).toList();
		}

	}

}
