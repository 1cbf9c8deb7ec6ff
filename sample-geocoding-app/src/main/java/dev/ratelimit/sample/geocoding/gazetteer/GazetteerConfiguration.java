package dev.ratelimit.sample.geocoding.gazetteer;

import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * Loads the gazetteer shipped with the sample once, at start-up.
 */
@Configuration(proxyBeanMethods = false)
public class GazetteerConfiguration {

	@Bean
	Gazetteer gazetteer() {
		return Gazetteer.loadFromClasspath(Gazetteer.DEFAULT_RESOURCE);
	}

}
