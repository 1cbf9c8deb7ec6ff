package dev.ratelimit.core.redis.testing;

import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolver;

/**
 * A JUnit 5 extension that injects the shared test Redis ({@link TestRedis#standalone()})
 * as a {@link RedisEndpoint} parameter of test methods, lifecycle methods and
 * constructors.
 *
 * <pre class="code">
 * &#64;ExtendWith(RedisExtension.class)
 * class MyTests {
 *
 *     &#64;Test
 *     void works(RedisEndpoint redis) { ... }
 *
 * }
 * </pre>
 */
public final class RedisExtension implements ParameterResolver {

	@Override
	public boolean supportsParameter(ParameterContext parameterContext, ExtensionContext extensionContext) {
		return parameterContext.getParameter().getType() == RedisEndpoint.class;
	}

	@Override
	public Object resolveParameter(ParameterContext parameterContext, ExtensionContext extensionContext) {
		return TestRedis.standalone();
	}

}
