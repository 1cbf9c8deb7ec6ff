package dev.ratelimit.spring.autoconfigure;

import java.util.List;

import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.aop.AopAutoConfiguration;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.cloud.context.environment.EnvironmentChangeEvent;
import org.springframework.core.env.MapPropertySource;

import dev.ratelimit.spring.RateLimitService;
import dev.ratelimit.spring.overrides.CachingLimitOverrides;
import dev.ratelimit.spring.overrides.InMemoryLimitOverrides;
import dev.ratelimit.spring.overrides.LimitOverride;
import dev.ratelimit.spring.overrides.LimitOverrides;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What the starter sets up for run-time changes: where overrides live, the cache in front
 * of an application's own store, the reloader, and the Spring Cloud listener only where
 * Spring Cloud is.
 */
class RuntimeChangesAutoConfigurationTests {

	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(RateLimitAutoConfiguration.class,
				RateLimitAnnotationAutoConfiguration.class, AopAutoConfiguration.class))
		.withPropertyValues("ratelimit.policies.api.limits[0].rate=2/1m");

	@Test
	void theInMemoryBackendKeepsOverridesInMemory() {
		this.runner.run((context) -> {
			assertThat(context).hasSingleBean(InMemoryLimitOverrides.class);
			assertThat(context.getBean(RateLimitService.class).overrides())
				.isSameAs(context.getBean(LimitOverrides.class));
		});
	}

	@Test
	void anApplicationsOwnStoreReplacesTheBuiltInOneBehindABoundedCache() {
		this.runner.withBean(LimitOverrides.class, OwnStore::new)
			.withPropertyValues("ratelimit.overrides.cache-size=5", "ratelimit.overrides.cache-ttl=1m")
			.run((context) -> {
				assertThat(context).doesNotHaveBean(InMemoryLimitOverrides.class);
				LimitOverrides used = context.getBean(RateLimitService.class).overrides();
				assertThat(used).isInstanceOf(CachingLimitOverrides.class);
				assertThat(((CachingLimitOverrides) used).delegate()).isSameAs(context.getBean(LimitOverrides.class));
			});
	}

	@Test
	void aCacheOfNoClientsOrNoTimeFailsStartUpNamingTheProperty() {
		this.runner.withPropertyValues("ratelimit.overrides.cache-size=0")
			.run((context) -> ConfigurationFailures.assertFailure(context, "ratelimit.overrides.cache-size",
					"must be at least 1 (was 0)"));
		this.runner.withPropertyValues("ratelimit.overrides.cache-ttl=0s")
			.run((context) -> ConfigurationFailures.assertFailure(context, "ratelimit.overrides.cache-ttl",
					"must be positive (was PT0S)"));
	}

	@Test
	void theReloaderListensToSpringCloudWhereItIs() {
		this.runner.run((context) -> {
			assertThat(context).hasSingleBean(RateLimitConfigurationReloader.class);
			assertThat(context).hasSingleBean(RateLimitRefreshListener.class);
		});
		this.runner.withClassLoader(new FilteredClassLoader(EnvironmentChangeEvent.class)).run((context) -> {
			assertThat(context).hasNotFailed();
			assertThat(context).hasSingleBean(RateLimitConfigurationReloader.class);
			assertThat(context).doesNotHaveBean(RateLimitRefreshListener.class);
		});
	}

	@Test
	void anEnvironmentChangeOfRateLimitKeysReloadsAndOfOtherKeysDoesNot() {
		this.runner.run((context) -> {
			RateLimitService service = context.getBean(RateLimitService.class);
			context.getEnvironment()
				.getPropertySources()
				.addFirst(new MapPropertySource("changed",
						java.util.Map.of("ratelimit.policies.api.limits[0].rate", "7/1m")));
			context.publishEvent(new EnvironmentChangeEvent(context, java.util.Set.of("spring.application.name")));
			assertThat(service.policies().get("api").limits().get(0).capacity()).isEqualTo(2);
			context.publishEvent(
					new EnvironmentChangeEvent(context, java.util.Set.of("ratelimit.policies.api.limits[0].rate")));
			assertThat(service.policies().get("api").limits().get(0).capacity()).isEqualTo(7);
		});
	}

	@Test
	void aReloadThatDropsAPolicyAnAnnotationNamesIsRefusedAndTheRunningOneStays() {
		java.util.Map<String, Object> editable = new java.util.HashMap<>(java.util.Map
			.of("ratelimit.policies.named.limits[0].rate", "3/1m", "ratelimit.policies.other.limits[0].rate", "4/1m"));
		new ApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(RateLimitAutoConfiguration.class,
					RateLimitAnnotationAutoConfiguration.class, AopAutoConfiguration.class))
			.withInitializer((context) -> context.getEnvironment()
				.getPropertySources()
				.addFirst(new MapPropertySource("editable", editable)))
			.withBean(Annotated.class)
			.run((context) -> {
				RateLimitService service = context.getBean(RateLimitService.class);
				RateLimitConfigurationReloader reloader = context.getBean(RateLimitConfigurationReloader.class);
				context.getBean(Annotated.class).call();

				editable.remove("ratelimit.policies.named.limits[0].rate");
				assertThat(reloader.reload(List.of("ratelimit.policies.named.limits[0].rate"))).isFalse();
				assertThat(service.policies().names()).containsExactlyInAnyOrder("named", "other");

				editable.put("ratelimit.policies.named.limits[0].rate", "9/1m");
				assertThat(reloader.reload(List.of("ratelimit.policies.named.limits[0].rate"))).isTrue();
				assertThat(service.policies().get("named").limits().get(0).capacity()).isEqualTo(9);
			});
	}

	static class Annotated {

		@dev.ratelimit.spring.annotation.RateLimited("named")
		public void call() {
		}

	}

	private static final class OwnStore implements LimitOverrides {

		@Override
		public @Nullable LimitOverride find(String policy, String client) {
			return null;
		}

		@Override
		public List<LimitOverride> list() {
			return List.of();
		}

		@Override
		public void put(LimitOverride override) {
		}

		@Override
		public boolean remove(String policy, String client) {
			return false;
		}

	}

}
