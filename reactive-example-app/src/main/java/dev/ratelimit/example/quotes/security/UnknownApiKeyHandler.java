package dev.ratelimit.example.quotes.security;

import java.net.URI;

import reactor.core.publisher.Mono;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.http.ProblemDetail;
import org.springframework.http.server.reactive.ServerHttpResponse;
import org.springframework.security.core.AuthenticationException;
import org.springframework.security.web.server.WebFilterExchange;
import org.springframework.security.web.server.authentication.ServerAuthenticationFailureHandler;

/**
 * Answers an unknown API key with a 401 problem at once, before the rate limiter: the
 * caller meant to be a client, and guessing its tier would be wrong either way.
 */
public class UnknownApiKeyHandler implements ServerAuthenticationFailureHandler {

	private final JsonMapper jsonMapper;

	private final String header;

	public UnknownApiKeyHandler(JsonMapper jsonMapper, String header) {
		this.jsonMapper = jsonMapper;
		this.header = header;
	}

	@Override
	public Mono<Void> onAuthenticationFailure(WebFilterExchange webFilterExchange, AuthenticationException exception) {
		ProblemDetail problem = ProblemDetail.forStatusAndDetail(HttpStatus.UNAUTHORIZED, "The API key in the "
				+ this.header + " header is not known. Use a valid key, or none for the anonymous tier.");
		problem.setTitle("Unknown API key");
		problem.setInstance(URI.create(webFilterExchange.getExchange().getRequest().getPath().value()));
		ServerHttpResponse response = webFilterExchange.getExchange().getResponse();
		response.setStatusCode(HttpStatus.UNAUTHORIZED);
		response.getHeaders().setContentType(MediaType.APPLICATION_PROBLEM_JSON);
		response.getHeaders().set("WWW-Authenticate", "ApiKey header=\"" + this.header + "\"");
		DataBuffer body = response.bufferFactory().wrap(this.jsonMapper.writeValueAsBytes(problem));
		return response.writeWith(Mono.just(body));
	}

}
