package dev.ratelimit.example.quotes.security;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

import org.springframework.boot.context.properties.ConfigurationProperties;

import dev.ratelimit.spring.PolicyRegistry;

/**
 * The API keys the service knows, each with the client it identifies and that client's
 * tier, and the operator.
 */
@ConfigurationProperties("quotes")
public class ApiKeyProperties {

	/**
	 * Known API keys, by key.
	 */
	private final Map<String, Client> apiKeys = new LinkedHashMap<>();

	/**
	 * The operator, who may read and reset one client's limits.
	 */
	private final Operator operator = new Operator();

	public Map<String, Client> getApiKeys() {
		return this.apiKeys;
	}

	public Operator getOperator() {
		return this.operator;
	}

	/**
	 * Checks that every key's tier is one the rate limiter knows. The {@code api} policy
	 * has limits for its tiers only, so a caller of another tier would get the default
	 * tier's (anonymous) limits: a misspelt tier would quietly downgrade a paying client.
	 * @param policies the rate-limit policies
	 * @throws IllegalStateException naming each client whose tier is unknown, and the
	 * known tiers
	 */
	public void checkTiers(PolicyRegistry policies) {
		Set<String> known = policies.knownTiers();
		List<String> unknown = new ArrayList<>();
		this.apiKeys.forEach((key, client) -> {
			if (!known.contains(PolicyRegistry.normalizeTier(client.getTier()))) {
				unknown.add("client " + client.nameOr(key) + " has tier '" + client.getTier() + "'");
			}
		});
		if (!unknown.isEmpty()) {
			throw new IllegalStateException("quotes.api-keys: " + String.join(", ", unknown)
					+ ", which no rate-limit policy defines (known tiers: " + String.join(", ", known)
					+ "); its callers would get the limits of the default tier '" + policies.defaultTier() + "'");
		}
	}

	/**
	 * A client that an API key identifies.
	 */
	public static class Client {

		/**
		 * Name of the client, the principal of its requests; the key itself if empty.
		 */
		private String name = "";

		/**
		 * Tier of the client, granted as the authority TIER_<tier>.
		 */
		private String tier = "free";

		public String getName() {
			return this.name;
		}

		public void setName(String name) {
			this.name = name;
		}

		public String getTier() {
			return this.tier;
		}

		public void setTier(String tier) {
			this.tier = tier;
		}

		String nameOr(String key) {
			return this.name.isEmpty() ? key : this.name;
		}

	}

	/**
	 * Credentials of the operator, checked with HTTP basic authentication.
	 */
	public static class Operator {

		/**
		 * User name of the operator.
		 */
		private String username = "operator";

		/**
		 * Password of the operator; set your own outside a demo.
		 */
		private String password = "change-me";

		public String getUsername() {
			return this.username;
		}

		public void setUsername(String username) {
			this.username = username;
		}

		public String getPassword() {
			return this.password;
		}

		public void setPassword(String password) {
			this.password = password;
		}

	}

}
