package dev.ratelimit.sample.geocoding.security;

import java.io.IOException;
import java.util.List;
import java.util.Locale;

import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.http.ProblemDetail;
import org.springframework.security.authentication.UsernamePasswordAuthenticationToken;
import org.springframework.security.core.authority.SimpleGrantedAuthority;
import org.springframework.security.core.context.SecurityContext;
import org.springframework.security.core.context.SecurityContextHolder;
import org.springframework.web.filter.OncePerRequestFilter;

/**
 * Authenticates a caller by its API key, read from the header the rate limiter keys
 * callers by ({@code ratelimit.client.api-key-header}, {@code X-API-Key} here): a known
 * key makes the caller its client, with the authority {@code TIER_<tier>} from which the
 * rate limiter reads the tier; an unknown key is answered 401 at once; no key, or a blank
 * one, leaves the caller anonymous, as the rate limiter treats it.
 */
public class ApiKeyAuthenticationFilter extends OncePerRequestFilter {

	private final ApiKeyProperties properties;

	private final JsonMapper jsonMapper;

	private final String header;

	public ApiKeyAuthenticationFilter(ApiKeyProperties properties, JsonMapper jsonMapper, String header) {
		this.properties = properties;
		this.jsonMapper = jsonMapper;
		this.header = header;
	}

	@Override
	protected void doFilterInternal(HttpServletRequest request, HttpServletResponse response, FilterChain chain)
			throws ServletException, IOException {
		String apiKey = request.getHeader(this.header);
		if (apiKey == null || apiKey.isBlank()) {
			chain.doFilter(request, response);
			return;
		}
		ApiKeyProperties.Client client = this.properties.getApiKeys().get(apiKey);
		if (client == null) {
			reject(request, response);
			return;
		}
		String name = client.getName().isEmpty() ? apiKey : client.getName();
		List<SimpleGrantedAuthority> authorities = List.of(new SimpleGrantedAuthority("ROLE_CLIENT"),
				new SimpleGrantedAuthority("TIER_" + client.getTier().toUpperCase(Locale.ROOT)));
		SecurityContext context = SecurityContextHolder.createEmptyContext();
		context.setAuthentication(UsernamePasswordAuthenticationToken.authenticated(name, null, authorities));
		SecurityContextHolder.setContext(context);
		chain.doFilter(request, response);
	}

	private void reject(HttpServletRequest request, HttpServletResponse response) throws IOException {
		ProblemDetail problem = ProblemDetail.forStatusAndDetail(HttpStatus.UNAUTHORIZED, "The API key in the "
				+ this.header + " header is not known. Use a valid key, or none for the anonymous tier.");
		problem.setTitle("Unknown API key");
		problem.setInstance(java.net.URI.create(request.getRequestURI()));
		response.setStatus(HttpStatus.UNAUTHORIZED.value());
		response.setContentType(MediaType.APPLICATION_PROBLEM_JSON_VALUE);
		response.setHeader("WWW-Authenticate", "ApiKey header=\"" + this.header + "\"");
		this.jsonMapper.writeValue(response.getOutputStream(), problem);
	}

}
