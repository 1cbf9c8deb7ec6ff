package dev.ratelimit.peers;

import redis.clients.jedis.JedisPool;
import redis.clients.jedis.JedisPoolConfig;

import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.data.redis.autoconfigure.DataRedisProperties;
import org.springframework.cache.annotation.EnableCaching;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Profile;

/**
 * What {@code bucket4j-spring-boot-starter} needs besides its properties: in memory, a
 * JCache {@code CacheManager}, which Spring Boot creates only with caching enabled; on
 * Redis, a {@link JedisPool}, the client of the one Redis proxy manager that its servlet
 * filter takes.
 */
@Configuration(proxyBeanMethods = false)
class Bucket4jConfiguration {

	@Configuration(proxyBeanMethods = false)
	@Profile("bucket4j-memory")
	@EnableCaching
	static class InMemory {

	}

	@Configuration(proxyBeanMethods = false)
	@Profile("bucket4j-redis")
	static class OnRedis {

		// as many connections as run.sh's wrk opens, so that requests never queue for
		// one (the pool's default is 8)
		@Bean(destroyMethod = "close")
		JedisPool jedisPool(DataRedisProperties redis, @Value("${peers.bucket4j.jedis-pool-size}") int size) {
			JedisPoolConfig pool = new JedisPoolConfig();
			pool.setMaxTotal(size);
			pool.setMaxIdle(size);
			return new JedisPool(pool, redis.getHost(), redis.getPort());
		}

	}

}
