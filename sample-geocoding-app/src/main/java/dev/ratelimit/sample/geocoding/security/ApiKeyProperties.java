package dev.ratelimit.sample.geocoding.security;

import java.util.LinkedHashMap;
import java.util.Map;

import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * The API keys the service knows, each with the client it identifies and that client's tier.
 */
@ConfigurationProperties("geocoding")
public class ApiKeyProperties {

	/**
	 * Known API keys, by key.
	 */
	private final Map<String, Client> apiKeys = new LinkedHashMap<>();

	/**
	 * The operator allowed to use the actuator's write operations (resetting a client's limits).
	 */
	private final Operator operator = new Operator();

	public Map<String, Client> getApiKeys() {
		return this.apiKeys;
	}

	public Operator getOperator() {
		return this.operator;
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
