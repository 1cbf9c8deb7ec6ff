package dev.ratelimit.example.quotes.security;

import java.util.List;
import java.util.Locale;

import reactor.core.publisher.Mono;

import org.springframework.security.authentication.BadCredentialsException;
import org.springframework.security.authentication.ReactiveAuthenticationManager;
import org.springframework.security.authentication.UsernamePasswordAuthenticationToken;
import org.springframework.security.core.Authentication;
import org.springframework.security.core.authority.SimpleGrantedAuthority;

/**
 * Authenticates the API key that {@link ApiKeyAuthenticationConverter} read: a known key
 * makes the caller its client, with the authority {@code TIER_<tier>} from which the rate
 * limiter reads the tier; an unknown key fails.
 */
public class ApiKeyAuthenticationManager implements ReactiveAuthenticationManager {

	private final ApiKeyProperties properties;

	public ApiKeyAuthenticationManager(ApiKeyProperties properties) {
		this.properties = properties;
	}

	@Override
	public Mono<Authentication> authenticate(Authentication presented) {
		String apiKey = String.valueOf(presented.getCredentials());
		ApiKeyProperties.Client client = this.properties.getApiKeys().get(apiKey);
		if (client == null) {
			return Mono.error(new BadCredentialsException("Unknown API key"));
		}
		List<SimpleGrantedAuthority> authorities = List.of(new SimpleGrantedAuthority("ROLE_CLIENT"),
				new SimpleGrantedAuthority("TIER_" + client.getTier().toUpperCase(Locale.ROOT)));
		return Mono.just(UsernamePasswordAuthenticationToken.authenticated(client.nameOr(apiKey), null, authorities));
	}

}
