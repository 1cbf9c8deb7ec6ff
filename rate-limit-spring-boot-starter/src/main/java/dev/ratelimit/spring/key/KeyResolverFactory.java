package dev.ratelimit.spring.key;

import java.util.Locale;
import java.util.Objects;

import org.jspecify.annotations.Nullable;

import org.springframework.beans.factory.BeanFactory;
import org.springframework.beans.factory.ListableBeanFactory;

import dev.ratelimit.spring.KeyResolver;
import dev.ratelimit.spring.RateLimitContext;
import dev.ratelimit.spring.RateLimitExpression;

/**
 * Turns a configured key strategy into a {@link KeyResolver}: {@code principal},
 * {@code api-key}, {@code ip}, {@code global}, {@code header:NAME}, {@code bean:NAME} or
 * SpEL {@code #{...}}. Every strategy but {@code ip} and {@code global} falls back to the
 * client address when it has no key for a call.
 */
public final class KeyResolverFactory {

	/** The key shared by all callers of the {@code global} strategy. */
	public static final String GLOBAL_KEY = "global";

	private static final String STRATEGIES = "principal, api-key, ip, global, header:NAME, bean:NAME or SpEL #{...}";

	private final ClientAddressResolver addressResolver;

	private final ApiKeyResolver apiKeyResolver;

	private final @Nullable BeanFactory beanFactory;

	/**
	 * Creates a factory whose {@code api-key} strategy hashes API keys with SHA-256.
	 * @param addressResolver the resolver of client addresses, the {@code ip} strategy
	 * and the fallback of others
	 * @param apiKeyHeader the header of the {@code api-key} strategy
	 * @param beanFactory the bean factory that {@code bean:NAME} and {@code @beans} refer
	 * to
	 */
	public KeyResolverFactory(ClientAddressResolver addressResolver, String apiKeyHeader,
			@Nullable BeanFactory beanFactory) {
		this(addressResolver, apiKeyHeader, null, beanFactory);
	}

	/**
	 * Creates a factory.
	 * @param addressResolver the resolver of client addresses, the {@code ip} strategy
	 * and the fallback of others
	 * @param apiKeyHeader the header of the {@code api-key} strategy
	 * @param apiKeySecret the secret with which the {@code api-key} strategy hashes API
	 * keys (HMAC-SHA-256), or {@code null} to hash them with SHA-256
	 * @param beanFactory the bean factory that {@code bean:NAME} and {@code @beans} refer
	 * to
	 * @throws IllegalArgumentException if the secret is blank
	 */
	public KeyResolverFactory(ClientAddressResolver addressResolver, String apiKeyHeader, @Nullable String apiKeySecret,
			@Nullable BeanFactory beanFactory) {
		this.addressResolver = Objects.requireNonNull(addressResolver, "addressResolver must not be null");
		this.apiKeyResolver = new ApiKeyResolver(Objects.requireNonNull(apiKeyHeader, "apiKeyHeader must not be null"),
				apiKeySecret);
		this.beanFactory = beanFactory;
	}

	/**
	 * Returns the resolver of a key strategy, checking it now so that a mistake fails
	 * start-up.
	 * @param strategy the strategy as configured
	 * @return the resolver
	 * @throws IllegalArgumentException if the strategy is unknown, names a missing bean
	 * or does not parse
	 */
	public KeyResolver create(String strategy) {
		String trimmed = strategy.trim();
		if (RateLimitExpression.isExpression(trimmed)) {
			return withFallback(new ExpressionKeyResolver(RateLimitExpression.parse(trimmed)));
		}
		String lower = trimmed.toLowerCase(Locale.ROOT);
		if (lower.startsWith("header:")) {
			String header = trimmed.substring("header:".length()).trim();
			if (header.isEmpty()) {
				throw new IllegalArgumentException(
						"key strategy '" + strategy + "' names no header; write header:NAME");
			}
			return withFallback(new HeaderKeyResolver(header));
		}
		if (lower.startsWith("bean:")) {
			return withFallback(beanResolver(strategy, trimmed.substring("bean:".length()).trim()));
		}
		return switch (lower) {
			case "principal" -> withFallback(new PrincipalKeyResolver());
			case "api-key" -> withFallback(this.apiKeyResolver);
			case "ip" -> this.addressResolver;
			case "global" -> new KeyResolver() {

				@Override
				public String resolveKey(RateLimitContext context) {
					return GLOBAL_KEY;
				}

				@Override
				public String storedKey(String client) {
					return GLOBAL_KEY;
				}

				@Override
				public String toString() {
					return "global";
				}

			};
			default ->
				throw new IllegalArgumentException("unknown key strategy '" + strategy + "'; expected " + STRATEGIES);
		};
	}

	private KeyResolver beanResolver(String strategy, String beanName) {
		BeanFactory factory = this.beanFactory;
		if (beanName.isEmpty()) {
			throw new IllegalArgumentException("key strategy '" + strategy + "' names no bean; write bean:NAME");
		}
		if (factory == null || !factory.containsBean(beanName)) {
			throw new IllegalArgumentException("key strategy '" + strategy + "' names no bean '" + beanName
					+ "'; define a KeyResolver bean of that name");
		}
		if (!factory.isTypeMatch(beanName, KeyResolver.class)) {
			throw new IllegalArgumentException("key strategy '" + strategy + "' names bean '" + beanName
					+ "', which is not a " + KeyResolver.class.getName() + availableResolvers(factory));
		}
		return new KeyResolver() {

			private volatile @Nullable KeyResolver bean;

			@Override
			public @Nullable String resolveKey(RateLimitContext context) {
				KeyResolver resolver = this.bean;
				if (resolver == null) {
					resolver = factory.getBean(beanName, KeyResolver.class);
					this.bean = resolver;
				}
				return resolver.resolveKey(context);
			}

			@Override
			public String storedKey(String client) {
				return factory.getBean(beanName, KeyResolver.class).storedKey(client);
			}

			@Override
			public String toString() {
				return "bean:" + beanName;
			}

		};
	}

	private static String availableResolvers(BeanFactory factory) {
		if (factory instanceof ListableBeanFactory listable) {
			String[] names = listable.getBeanNamesForType(KeyResolver.class, false, false);
			if (names.length > 0) {
				return "; KeyResolver beans: " + String.join(", ", names);
			}
		}
		return "";
	}

	private KeyResolver withFallback(KeyResolver primary) {
		ClientAddressResolver fallback = this.addressResolver;
		return new KeyResolver() {

			@Override
			public String resolveKey(RateLimitContext context) {
				String key = primary.resolveKey(context);
				return (key == null || key.isBlank()) ? fallback.resolveKey(context) : key;
			}

			@Override
			public String storedKey(String client) {
				return client.startsWith("ip:") ? fallback.storedKey(client) : primary.storedKey(client);
			}

			@Override
			public String toString() {
				return primary + " (else ip)";
			}

		};
	}

	/**
	 * Returns the resolver of client addresses.
	 * @return the address resolver
	 */
	public ClientAddressResolver addressResolver() {
		return this.addressResolver;
	}

}
