package dev.ratelimit.spring.testsupport;

import java.net.URL;
import java.net.URLClassLoader;
import java.util.concurrent.Callable;

import dev.ratelimit.core.RateLimiter;
import dev.ratelimit.spring.RateLimitService;

/**
 * Defines the classes of {@code dev.ratelimit} (core, starter and the tests) itself, and
 * asks its parent for every other class: with a parent that hides a library (the servlet
 * API, say), any use of that library on the starter's path fails with
 * {@link NoClassDefFoundError}, which a filtered class loader alone would not show, since
 * the starter's classes would still come from the test's class loader.
 */
public final class StarterClassLoader extends URLClassLoader {

	/**
	 * Creates the class loader.
	 * @param parent the class loader of every class outside {@code dev.ratelimit}
	 * @param test a class of the tests, whose classes this loader defines too
	 */
	public StarterClassLoader(ClassLoader parent, Class<?> test) {
		super(new URL[] { location(RateLimiter.class), location(RateLimitService.class), location(test) }, parent);
	}

	/**
	 * Runs a scenario with the starter's classes, the test's and the scenario's own
	 * defined by a starter class loader over the given parent, as the thread's context
	 * class loader too (Spring loads some classes by name through it).
	 * @param <T> what the scenario returns
	 * @param parent the class loader of every class outside {@code dev.ratelimit}
	 * @param scenario a public class of the tests with a public no-argument constructor
	 * @return what the scenario returned
	 * @throws Exception what the scenario threw
	 */
	@SuppressWarnings("unchecked")
	public static <T> T run(ClassLoader parent, Class<? extends Callable<T>> scenario) throws Exception {
		try (StarterClassLoader loader = new StarterClassLoader(parent, scenario)) {
			Class<?> defined = loader.loadClass(scenario.getName());
			if (defined == scenario) {
				throw new IllegalStateException(scenario.getName() + " was not defined by the starter class loader");
			}
			Callable<T> call = (Callable<T>) defined.getDeclaredConstructor().newInstance();
			Thread thread = Thread.currentThread();
			ClassLoader previous = thread.getContextClassLoader();
			thread.setContextClassLoader(loader);
			try {
				return call.call();
			}
			finally {
				thread.setContextClassLoader(previous);
			}
		}
	}

	private static URL location(Class<?> type) {
		return type.getProtectionDomain().getCodeSource().getLocation();
	}

	@Override
	protected Class<?> loadClass(String name, boolean resolve) throws ClassNotFoundException {
		if (!name.startsWith("dev.ratelimit.")) {
			return super.loadClass(name, resolve);
		}
		synchronized (getClassLoadingLock(name)) {
			Class<?> type = findLoadedClass(name);
			if (type == null) {
				type = findClass(name);
			}
			if (resolve) {
				resolveClass(type);
			}
			return type;
		}
	}

}
