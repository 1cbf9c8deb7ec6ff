package dev.ratelimit.core.redis.testing;

import java.net.URI;

import org.jspecify.annotations.Nullable;

import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.jedis.JedisConnectionFactory;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

/**
 * Where a test Redis listens, with helpers to build started connection factories for it.
 *
 * @param host the host
 * @param port the port
 * @param password the password, or {@code null}
 * @param database the database index
 */
public record RedisEndpoint(String host, int port, @Nullable String password, int database) {

	/**
	 * Parses a {@code redis://[:password@]host[:port][/database]} URL.
	 * @param url the URL
	 * @return the endpoint
	 */
	public static RedisEndpoint parse(String url) {
		URI uri = URI.create(url.trim());
		if (!"redis".equals(uri.getScheme()) || uri.getHost() == null) {
			throw new IllegalArgumentException("Expected a redis://host:port URL (was '" + url + "')");
		}
		String password = null;
		if (uri.getUserInfo() != null) {
			String info = uri.getUserInfo();
			password = info.contains(":") ? info.substring(info.indexOf(':') + 1) : info;
		}
		String path = (uri.getPath() != null) ? uri.getPath().replace("/", "") : "";
		int database = path.isEmpty() ? 0 : Integer.parseInt(path);
		return new RedisEndpoint(uri.getHost(), (uri.getPort() > 0) ? uri.getPort() : 6379, password, database);
	}

	/**
	 * Returns the endpoint as a {@code redis://} URL.
	 * @return the URL
	 */
	public String url() {
		return "redis://" + ((this.password != null) ? ":" + this.password + "@" : "") + this.host + ":" + this.port
				+ "/" + this.database;
	}

	/**
	 * Returns the standalone configuration of this endpoint.
	 * @return the configuration
	 */
	public RedisStandaloneConfiguration configuration() {
		RedisStandaloneConfiguration configuration = new RedisStandaloneConfiguration(this.host, this.port);
		configuration.setDatabase(this.database);
		if (this.password != null) {
			configuration.setPassword(this.password);
		}
		return configuration;
	}

	/**
	 * Returns a started Lettuce connection factory; the caller destroys it.
	 * @return the factory
	 */
	public LettuceConnectionFactory lettuce() {
		LettuceConnectionFactory factory = new LettuceConnectionFactory(configuration());
		factory.afterPropertiesSet();
		factory.start();
		return factory;
	}

	/**
	 * Returns a started Jedis connection factory; the caller destroys it.
	 * @return the factory
	 */
	public JedisConnectionFactory jedis() {
		JedisConnectionFactory factory = new JedisConnectionFactory(configuration());
		factory.afterPropertiesSet();
		factory.start();
		return factory;
	}

	/**
	 * Opens a harness client.
	 * @return the client
	 */
	public RespClient client() {
		return RespClient.connect(this);
	}

	@Override
	public String toString() {
		return this.host + ":" + this.port + "/" + this.database;
	}

}
