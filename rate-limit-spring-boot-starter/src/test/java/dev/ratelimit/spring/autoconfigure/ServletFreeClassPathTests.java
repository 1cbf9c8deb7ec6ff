package dev.ratelimit.spring.autoconfigure;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;

import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.aop.AopAutoConfiguration;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.web.servlet.FilterRegistrationBean;

import dev.ratelimit.core.RateLimitExceededException;
import dev.ratelimit.core.RateLimiter;
import dev.ratelimit.spring.RateLimitService;
import dev.ratelimit.spring.annotation.RateLimited;
import dev.ratelimit.spring.annotation.RateLimitedAdvisor;
import dev.ratelimit.spring.annotation.WebInvocationSupport;
import dev.ratelimit.spring.web.PendingLimitsExceptionResolver;
import dev.ratelimit.spring.web.RateLimitExceptionHandler;
import dev.ratelimit.spring.testsupport.StarterClassLoader;
import dev.ratelimit.spring.web.RateLimitHeaders;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * The starter in an application without the servlet API or Spring MVC (a batch job, or
 * later a WebFlux application): it starts, limits annotated methods, and creates no
 * servlet beans.
 */
class ServletFreeClassPathTests {

	private static final String[] SERVLET_API = { "jakarta.servlet.", "org.springframework.web.servlet." };

	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withClassLoader(new FilteredClassLoader(SERVLET_API))
		.withConfiguration(AutoConfigurations.of(RateLimitAutoConfiguration.class, RateLimitWebAutoConfiguration.class,
				RateLimitAnnotationAutoConfiguration.class, RateLimitMetricsAutoConfiguration.class,
				RateLimitEndpointAutoConfiguration.class, RateLimitHealthAutoConfiguration.class,
				RateLimitRedisAutoConfiguration.class, AopAutoConfiguration.class))
		.withPropertyValues("ratelimit.policies.orders.limits[0].rate=3/1m");

	@Test
	void startsWithTheServiceAndTheAnnotationButNoWebBeans() {
		this.runner.run((context) -> assertThat(context).hasNotFailed()
			.hasSingleBean(RateLimitService.class)
			.hasSingleBean(RateLimiter.class)
			.hasSingleBean(RateLimitedAdvisor.class)
			.doesNotHaveBean(FilterRegistrationBean.class)
			.doesNotHaveBean(RateLimitHeaders.class)
			.doesNotHaveBean(RateLimitExceptionHandler.class)
			.doesNotHaveBean(PendingLimitsExceptionResolver.class)
			.doesNotHaveBean(WebInvocationSupport.class));
	}

	@Test
	void limitsAnAnnotatedMethodOfAPlainBean() {
		this.runner.withBean(Orders.class).run((context) -> {
			Orders orders = context.getBean(Orders.class);
			orders.place(new Order(2));
			orders.place(new Order(1));
			assertThatExceptionOfType(RateLimitExceededException.class).isThrownBy(() -> orders.place(new Order(1)));
		});
	}

	/**
	 * The filtered class loader above hides classes from the auto-configurations'
	 * conditions, but the starter's own classes still come from the test's class loader,
	 * which has the servlet API. Here the starter's classes are defined by a class loader
	 * whose parent hides it, so that any use of a servlet type on the decision path fails
	 * with {@link NoClassDefFoundError}.
	 */
	@Test
	void decidesCallsWithTheStarterLoadedWhereTheServletApiIsMissing() throws Exception {
		assertThat(ordersWithout(SERVLET_API)).containsExactly("allowed", "allowed", "rejected");
	}

	/**
	 * The same without Project Reactor (an application without WebFlux or Lettuce): the
	 * interceptor's support of reactive return types must not be loaded.
	 */
	@Test
	void decidesCallsWithTheStarterLoadedWhereReactorIsMissing() throws Exception {
		assertThat(ordersWithout("reactor.", "org.reactivestreams.")).containsExactly("allowed", "allowed", "rejected");
	}

	private static List<String> ordersWithout(String... hidden) throws Exception {
		return StarterClassLoader.run(new FilteredClassLoader(hidden), OrdersScenario.class);
	}

	/**
	 * Starts the starter, limits a method whose cost is SpEL, and reports each call's
	 * outcome; run in the {@link StarterClassLoader}.
	 */
	public static final class OrdersScenario implements Callable<List<String>> {

		@Override
		public List<String> call() {
			List<String> outcomes = new ArrayList<>();
			new ApplicationContextRunner().withClassLoader(getClass().getClassLoader())
				.withConfiguration(AutoConfigurations.of(RateLimitAutoConfiguration.class,
						RateLimitAnnotationAutoConfiguration.class, AopAutoConfiguration.class))
				.withPropertyValues("ratelimit.policies.orders.limits[0].rate=3/1m")
				.withBean(Orders.class)
				.run((context) -> {
					assertThat(context).hasNotFailed();
					Orders orders = context.getBean(Orders.class);
					for (int quantity : new int[] { 2, 1, 1 }) {
						try {
							orders.place(new Order(quantity));
							outcomes.add("allowed");
						}
						catch (RateLimitExceededException ex) {
							outcomes.add("rejected");
						}
					}
				});
			return outcomes;
		}

	}

	/**
	 * An order of some items.
	 *
	 * @param quantity how many items
	 */
	public record Order(int quantity) {

	}

	/**
	 * A plain bean with a limited method, costing a permit per item.
	 */
	public static class Orders {

		@RateLimited(policy = "orders", cost = "#{#order.quantity()}")
		public void place(Order order) {
		}

	}

}
