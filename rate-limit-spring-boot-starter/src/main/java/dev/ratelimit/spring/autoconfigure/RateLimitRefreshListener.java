package dev.ratelimit.spring.autoconfigure;

import java.util.Objects;

import org.springframework.cloud.context.environment.EnvironmentChangeEvent;
import org.springframework.context.ApplicationListener;

/**
 * Reloads the rate-limit configuration when Spring Cloud's {@link EnvironmentChangeEvent}
 * names a {@code ratelimit.*} key, such as after {@code POST /actuator/refresh}. Loaded
 * only where Spring Cloud Context is.
 */
final class RateLimitRefreshListener implements ApplicationListener<EnvironmentChangeEvent> {

	static final String ENVIRONMENT_CHANGE_EVENT = "org.springframework.cloud.context.environment.EnvironmentChangeEvent";

	private final RateLimitConfigurationReloader reloader;

	RateLimitRefreshListener(RateLimitConfigurationReloader reloader) {
		this.reloader = Objects.requireNonNull(reloader, "reloader must not be null");
	}

	@Override
	public void onApplicationEvent(EnvironmentChangeEvent event) {
		if (event.getKeys().stream().anyMatch((key) -> key.equals("ratelimit") || key.startsWith("ratelimit."))) {
			this.reloader.reload(event.getKeys());
		}
	}

}
