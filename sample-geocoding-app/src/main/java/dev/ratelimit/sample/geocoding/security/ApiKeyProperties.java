package dev.ratelimit.sample.geocoding.security;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

import org.springframework.boot.context.properties.ConfigurationProperties;

import dev.ratelimit.spring.PolicyRegistry;

/**
 * The API keys the service knows, each with the client it identifies and that client's
 * tier.
 */
@ConfigurationProperties("geocoding")
public class ApiKeyProperties {

	/**
	 * Known API keys, by key.
	 */
	private final Map<String, Client> apiKeys = new LinkedHashMap<>();

	/**
	 * The operator allowed to use the actuator's write operations (resetting a client's
	 * limits).
	 */
	private final Operator operator = new Operator();

	/**
	 * The users who may sign in with {@code POST /api/login}, by username: each with its
	 * password and the API key it gets.
	 */
	private final Map<String, Login> logins = new LinkedHashMap<>();

	public Map<String, Client> getApiKeys() {
		return this.apiKeys;
	}

	public Map<String, Login> getLogins() {
		return this.logins;
	}

	public Operator getOperator() {
		return this.operator;
	}

	/**
	 * Checks that every key's tier is one the rate limiter knows: a tier that a policy
	 * defines, or the default tier. The {@code api} policy has limits for its tiers only,
	 * so a caller of another tier would get the default tier's (anonymous) limits: a
	 * misspelt tier would quietly downgrade a paying client.
	 * @param policies the rate-limit policies
	 * @throws IllegalStateException naming each client whose tier is unknown, and the
	 * known tiers
	 */
	public void checkTiers(PolicyRegistry policies) {
		Set<String> known = policies.knownTiers();
		List<String> unknown = new ArrayList<>();
		this.apiKeys.values().forEach((client) -> {
			if (!known.contains(PolicyRegistry.normalizeTier(client.getTier()))) {
				String name = client.getName().isEmpty() ? "(unnamed)" : client.getName();
				unknown.add("client " + name + " has tier '" + client.getTier() + "'");
			}
		});
		if (!unknown.isEmpty()) {
			throw new IllegalStateException("geocoding.api-keys: " + String.join(", ", unknown)
					+ ", which no rate-limit policy defines (known tiers: " + String.join(", ", known)
					+ "); its callers would get the limits of the default tier '" + policies.defaultTier() + "'");
		}
	}

	/**
	 * A client that an API key identifies.
	 */
	public static class Client {

		/**
		 * Name of the client, the principal of its requests.
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

	}

	/**
	 * Credentials of the operator, checked with HTTP basic authentication.
	 */
	public static class Login {

		/**
		 * The user's password (a demo: kept in the configuration as it is).
		 */
		private String password = "";

		/**
		 * The API key a successful sign-in returns.
		 */
		private String apiKey = "";

		public String getPassword() {
			return this.password;
		}

		public void setPassword(String password) {
			this.password = password;
		}

		public String getApiKey() {
			return this.apiKey;
		}

		public void setApiKey(String apiKey) {
			this.apiKey = apiKey;
		}

	}

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
