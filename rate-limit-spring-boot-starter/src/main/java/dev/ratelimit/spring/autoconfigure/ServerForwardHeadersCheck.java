package dev.ratelimit.spring.autoconfigure;

import java.util.Locale;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.boot.cloud.CloudPlatform;
import org.springframework.boot.context.properties.bind.Bindable;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.core.env.Environment;
import org.springframework.util.ClassUtils;
import org.springframework.util.StringUtils;

import dev.ratelimit.spring.RateLimitConfigurationException;

/**
 * Refuses to start an application whose web server replaces the client address with one
 * taken from a forwarding header before the rate limiter sees the request, unless the
 * operator chose whom the server believes. A client could otherwise choose its own
 * {@code ip} key, whatever {@code ratelimit.client.trusted-proxies} says. For Tomcat's
 * valve that a detected cloud platform turned on, it only warns, unless
 * {@code ratelimit.client.require-internal-proxies} is true.
 */
final class ServerForwardHeadersCheck {

	/*
	 * Spring Boot adds Tomcat's RemoteIpValve for server.forward-headers-strategy=native
	 * (also when the property is not set and a cloud platform such as Kubernetes is
	 * detected), or when remote-ip-header or protocol-header is set. The valve believes
	 * every private and loopback address unless internal-proxies says otherwise, and
	 * keeps no copy of the address it replaces. Another server's native support believes
	 * what it believes, and Spring Boot has no property to narrow it.
	 * ForwardedHeaderFilter (framework) needs no check: the client address resolver reads
	 * the request beneath it. On a cloud platform the operator chose nothing, and failing
	 * there stopped every servlet application on Kubernetes. The valve takes the
	 * right-most address that is not a private one, so a client outside, behind an
	 * ingress on a private address, cannot choose its address; only a caller on a private
	 * address can. That is worth a warning, not a refusal, unless the operator asks for
	 * the refusal.
	 */

	static final String STRATEGY = "server.forward-headers-strategy";

	static final String INTERNAL_PROXIES = "server.tomcat.remoteip.internal-proxies";

	private static final String REMOTE_IP_HEADER = "server.tomcat.remoteip.remote-ip-header";

	private static final String PROTOCOL_HEADER = "server.tomcat.remoteip.protocol-header";

	static final String REQUIRE_INTERNAL_PROXIES = "ratelimit.client.require-internal-proxies";

	private static final String SERVLET_WEB_SERVER_FACTORY = "org.springframework.boot.web.server.servlet."
			+ "ServletWebServerFactory";

	private static final String TOMCAT_WEB_SERVER_FACTORY = "org.springframework.boot.tomcat."
			+ "ConfigurableTomcatWebServerFactory";

	private static final String REMOTE_IP_VALVE = "org.apache.catalina.valves.RemoteIpValve";

	private static final String INSTEAD = "set " + STRATEGY + "=none (or framework, beneath which the rate limiter"
			+ " reads the address the server received) and list your proxies in ratelimit.client.trusted-proxies";

	private static final Log logger = LogFactory.getLog(ServerForwardHeadersCheck.class);

	private ServerForwardHeadersCheck() {
	}

	/**
	 * Checks the web server's handling of forwarding headers.
	 * @param environment the environment, with the {@code server.*} properties
	 * @param beanFactory the bean factory, whose web server factory says which server
	 * runs
	 * @param classLoader the class loader of the application
	 * @param requireInternalProxies whether a valve that a cloud platform turned on, with
	 * the internal proxies it believes by default, fails start-up rather than being
	 * warned of
	 * @return the check, done
	 * @throws RateLimitConfigurationException if the server would let a client choose its
	 * address
	 */
	static ServerForwardHeadersCheck check(Environment environment, ListableBeanFactory beanFactory,
			@Nullable ClassLoader classLoader, boolean requireInternalProxies) {
		Binder binder = Binder.get(environment);
		String strategy = binder.bind(STRATEGY, Bindable.of(String.class))
			.map((value) -> value.trim().toLowerCase(Locale.ROOT))
			.orElse(null);
		CloudPlatform platform = (strategy == null) ? CloudPlatform.getActive(environment) : null;
		boolean nativeStrategy = (strategy != null) ? strategy.equals("native")
				: platform != null && platform.isUsingForwardHeaders();
		String server = server(beanFactory, classLoader);
		if (server == null) {
			return new ServerForwardHeadersCheck();
		}
		String why = (strategy != null) ? "is 'native'"
				: "is not set, and Spring Boot uses 'native' on the detected cloud platform " + platform;
		if (!server.equals("Tomcat")) {
			if (nativeStrategy) {
				throw new RateLimitConfigurationException(STRATEGY, why + ": the web server (" + server
						+ ") then replaces the client address with one from a forwarding header, believing whom its own"
						+ " support believes (Jetty: every peer), before the rate limiter sees the request, so a client"
						+ " could choose its own 'ip' key; Spring Boot has no property to narrow that, and "
						+ INTERNAL_PROXIES + " applies to Tomcat only. " + capitalized(INSTEAD));
			}
			return new ServerForwardHeadersCheck();
		}
		if (binder.bind(INTERNAL_PROXIES, Bindable.of(String.class)).isBound()) {
			return new ServerForwardHeadersCheck();
		}
		String valve = "Tomcat's RemoteIpValve then replaces the client address with one from X-Forwarded-For for any"
				+ " request from an address that " + INTERNAL_PROXIES + " lists, by default every private and"
				+ " loopback address, before the rate limiter sees the request and without keeping the address it"
				+ " replaces, so a client on such an address could choose its own 'ip' key. " + capitalized(INSTEAD)
				+ "; or set " + INTERNAL_PROXIES + " to exactly the proxies you trust (empty trusts none)";
		if (nativeStrategy && strategy != null) {
			throw new RateLimitConfigurationException(STRATEGY, why + ": " + valve);
		}
		for (String header : new String[] { REMOTE_IP_HEADER, PROTOCOL_HEADER }) {
			if (StringUtils.hasText(binder.bind(header, Bindable.of(String.class)).orElse(null))) {
				throw new RateLimitConfigurationException(header,
						"is set, which turns Tomcat's RemoteIpValve on" + " whatever " + STRATEGY + " says: " + valve);
			}
		}
		if (nativeStrategy && requireInternalProxies) {
			throw new RateLimitConfigurationException(STRATEGY,
					why + ": " + valve + ". " + REQUIRE_INTERNAL_PROXIES + " is true, so start-up needs "
							+ INTERNAL_PROXIES + " (false: the application starts, with a warning)");
		}
		if (nativeStrategy) {
			logger.warn("Spring Boot turned Tomcat's RemoteIpValve on for the detected cloud platform " + platform
					+ " (" + STRATEGY + " is not set). It trusts X-Forwarded-For from every private and loopback"
					+ " address, since " + INTERNAL_PROXIES + " is not set, and takes the right-most address that is"
					+ " not one of them as the client's. Only a caller on a private address (another pod, a host"
					+ " inside your network) could therefore choose its client address, by which the rate limiter"
					+ " keys its requests ('ip', and the other key strategies' fallback); a caller outside, whose"
					+ " request a proxy on a private address forwards, cannot. Set " + INTERNAL_PROXIES
					+ " to exactly your proxies to narrow that, or " + REQUIRE_INTERNAL_PROXIES
					+ "=true to fail start-up instead");
		}
		return new ServerForwardHeadersCheck();
	}

	/**
	 * Checks a reactive application's handling of forwarding headers: Reactor Netty's own
	 * support ({@code native}) and Spring's {@code ForwardedHeaderTransformer}
	 * ({@code framework}) both replace the client address with one from a forwarding
	 * header of any peer before the rate limiter sees the exchange, and the transformer
	 * also removes the headers; the rate limiter cannot read beneath either.
	 * @param environment the environment, with the {@code server.*} properties
	 * @return the check, done
	 * @throws RateLimitConfigurationException if the server would let a client choose its
	 * address
	 */
	static ServerForwardHeadersCheck checkReactive(Environment environment) {
		String strategy = Binder.get(environment)
			.bind(STRATEGY, Bindable.of(String.class))
			.map((value) -> value.trim().toLowerCase(Locale.ROOT))
			.orElse(null);
		CloudPlatform platform = (strategy == null) ? CloudPlatform.getActive(environment) : null;
		String why = null;
		if ("native".equals(strategy) || (strategy == null && platform != null && platform.isUsingForwardHeaders())) {
			why = ((strategy != null) ? "is 'native'"
					: "is not set, and Spring Boot uses 'native' on the detected cloud platform " + platform)
					+ ": the reactive web server then replaces the client address with one from a forwarding header"
					+ " of any peer";
		}
		else if ("framework".equals(strategy)) {
			why = "is 'framework': Spring's ForwardedHeaderTransformer then replaces the client address with one from"
					+ " a forwarding header of any peer, and removes the headers";
		}
		if (why != null) {
			throw new RateLimitConfigurationException(STRATEGY,
					why + ", before the rate limiter sees the request,"
							+ " so a client could choose its own 'ip' key. Set " + STRATEGY
							+ "=none and list your proxies in" + " ratelimit.client.trusted-proxies");
		}
		return new ServerForwardHeadersCheck();
	}

	/**
	 * Returns the web server that will run: that of the application's web server factory;
	 * without one (a test's mock environment), Tomcat if it is on the class path, the
	 * server Spring Boot would start.
	 * @return {@code Tomcat}, the class of another server's factory, or {@code null} if
	 * no server is known
	 */
	private static @Nullable String server(ListableBeanFactory beanFactory, @Nullable ClassLoader classLoader) {
		if (ClassUtils.isPresent(SERVLET_WEB_SERVER_FACTORY, classLoader)) {
			Class<?> factoryType = ClassUtils.resolveClassName(SERVLET_WEB_SERVER_FACTORY, classLoader);
			String[] names = beanFactory.getBeanNamesForType(factoryType, false, false);
			if (names.length > 0) {
				boolean tomcat = ClassUtils.isPresent(TOMCAT_WEB_SERVER_FACTORY, classLoader);
				for (String name : names) {
					if (!tomcat || !beanFactory.isTypeMatch(name,
							ClassUtils.resolveClassName(TOMCAT_WEB_SERVER_FACTORY, classLoader))) {
						Class<?> type = beanFactory.getType(name, false);
						return (type != null) ? ClassUtils.getUserClass(type).getSimpleName() : name;
					}
				}
				return "Tomcat";
			}
		}
		return ClassUtils.isPresent(REMOTE_IP_VALVE, classLoader) ? "Tomcat" : null;
	}

	private static String capitalized(String text) {
		return Character.toUpperCase(text.charAt(0)) + text.substring(1);
	}

}
