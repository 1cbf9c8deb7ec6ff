package dev.ratelimit.spring.annotation;

import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

import org.jspecify.annotations.Nullable;

import org.springframework.aop.Advisor;
import org.springframework.aop.framework.Advised;
import org.springframework.aop.framework.autoproxy.AutoProxyUtils;
import org.springframework.aop.support.AopUtils;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.beans.factory.config.BeanDefinition;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.core.DefaultParameterNameDiscoverer;
import org.springframework.core.MethodClassKey;
import org.springframework.core.ParameterNameDiscoverer;
import org.springframework.core.annotation.MergedAnnotation;
import org.springframework.core.annotation.MergedAnnotations;
import org.springframework.core.annotation.MergedAnnotations.SearchStrategy;
import org.springframework.core.annotation.RepeatableContainers;
import org.springframework.util.ClassUtils;
import org.springframework.util.ReflectionUtils;

import dev.ratelimit.spring.AppliedPolicy;
import dev.ratelimit.spring.KeyResolver;
import dev.ratelimit.spring.Policy;
import dev.ratelimit.spring.PolicyRegistry;
import dev.ratelimit.spring.RateLimitConfigurationException;
import dev.ratelimit.spring.RateLimitCondition;
import dev.ratelimit.spring.RateLimitConfigurationException.Problem;
import dev.ratelimit.spring.RateLimitCost;
import dev.ratelimit.spring.RateLimitExpression;
import dev.ratelimit.spring.key.KeyResolverFactory;

/**
 * Finds and resolves the {@link RateLimited} annotations of methods, once per method and
 * class. When the application has started, it checks every annotated method of every
 * bean, so that an unknown policy, an expression that does not parse, or an annotation
 * that no proxy would ever apply (on a static or final method, on a bean that is not
 * proxied) fails start-up rather than going unnoticed.
 */
public final class RateLimitedMethods implements SmartInitializingSingleton {

	private static final MethodLimits NONE = new MethodLimits(List.of(), List.of(), new String[0]);

	private final PolicyRegistry policies;

	private final KeyResolverFactory keyResolvers;

	private final @Nullable ConfigurableListableBeanFactory beanFactory;

	private final ParameterNameDiscoverer parameterNames = new DefaultParameterNameDiscoverer();

	private final Map<MethodClassKey, MethodLimits> cache = new ConcurrentHashMap<>();

	private volatile boolean anyAnnotated;

	/**
	 * Creates the registry.
	 * @param policies the configured policies
	 * @param keyResolvers the factory of the keys that annotations name
	 * @param beanFactory the bean factory whose beans are checked at start-up, if any
	 */
	public RateLimitedMethods(PolicyRegistry policies, KeyResolverFactory keyResolvers,
			@Nullable ConfigurableListableBeanFactory beanFactory) {
		this.policies = Objects.requireNonNull(policies, "policies must not be null");
		this.keyResolvers = Objects.requireNonNull(keyResolvers, "keyResolvers must not be null");
		this.beanFactory = beanFactory;
	}

	/**
	 * Returns whether a method of a class carries {@link RateLimited}, directly, on the
	 * method it overrides, through a meta-annotation, or on its class for a public
	 * instance method.
	 * @param method the method
	 * @param targetClass the class of the object the method is called on
	 * @return whether the method is rate-limited
	 */
	public static boolean isAnnotated(Method method, Class<?> targetClass) {
		return !annotations(method, targetClass).isEmpty();
	}

	private static List<MergedAnnotation<RateLimited>> annotations(Method method, Class<?> targetClass) {
		if (method.getDeclaringClass() == Object.class) {
			return List.of();
		}
		Method specific = AopUtils.getMostSpecificMethod(method, targetClass);
		List<MergedAnnotation<RateLimited>> found = new ArrayList<>();
		MergedAnnotations.from(specific, SearchStrategy.TYPE_HIERARCHY, RepeatableContainers.standardRepeatables())
			.stream(RateLimited.class)
			.forEach(found::add);
		if (Modifier.isPublic(specific.getModifiers()) && !Modifier.isStatic(specific.getModifiers())) {
			MergedAnnotations
				.from(ClassUtils.getUserClass(targetClass), SearchStrategy.TYPE_HIERARCHY,
						RepeatableContainers.standardRepeatables())
				.stream(RateLimited.class)
				.forEach(found::add);
		}
		return found;
	}

	/**
	 * Returns the resolved annotations of a method.
	 * @param method the method
	 * @param targetClass the class of the object the method is called on
	 * @return the limits, or {@code null} if the method is not rate-limited
	 * @throws RateLimitConfigurationException if an annotation is invalid
	 */
	@Nullable MethodLimits find(Method method, Class<?> targetClass) {
		MethodClassKey cacheKey = new MethodClassKey(method, targetClass);
		MethodLimits limits = this.cache.get(cacheKey);
		if (limits == null) {
			List<Problem> problems = new ArrayList<>();
			limits = resolve(method, targetClass, problems);
			if (!problems.isEmpty()) {
				throw new RateLimitConfigurationException(problems);
			}
			this.cache.put(cacheKey, limits);
			this.anyAnnotated |= limits != NONE;
		}
		return (limits != NONE) ? limits : null;
	}

	/**
	 * Returns the names of the policies that the annotated methods found so far apply,
	 * which a new configuration must keep.
	 * @return the policy names
	 */
	public Set<String> policiesInUse() {
		Set<String> names = new java.util.TreeSet<>();
		this.cache.values()
			.forEach((limits) -> limits.policies().forEach((applied) -> names.add(applied.policy().name())));
		return names;
	}

	/**
	 * Returns whether any bean method was found annotated when the application started.
	 * @return whether some bean has rate-limited methods
	 */
	public boolean hasAnnotatedMethods() {
		return this.anyAnnotated;
	}

	private MethodLimits resolve(Method method, Class<?> targetClass, List<Problem> problems) {
		List<MergedAnnotation<RateLimited>> annotations = annotations(method, targetClass);
		if (annotations.isEmpty()) {
			return NONE;
		}
		Method specific = AopUtils.getMostSpecificMethod(method, targetClass);
		String element = element(method, targetClass);
		if (Modifier.isStatic(specific.getModifiers())) {
			problems.add(new Problem(element, "is on a static method, which no proxy intercepts, so it would never"
					+ " apply; rate-limit an instance method of a bean instead"));
			return NONE;
		}
		List<AppliedPolicy> applied = new ArrayList<>();
		List<RateLimitCost> costs = new ArrayList<>();
		List<@Nullable RateLimitCondition> conditions = new ArrayList<>();
		int before = problems.size();
		String[] names = this.parameterNames.getParameterNames(specific);
		Set<String> parameters = known(names);
		for (MergedAnnotation<RateLimited> annotation : annotations) {
			Policy policy = policy(annotation, element, problems);
			String keyText = annotation.getString("key");
			KeyResolver key = key(keyText, element, problems);
			// without a key of its own, the annotation's calls evaluate the policy's key
			RateLimitExpression policyKey = (keyText.isBlank() && policy != null) ? policy.keyExpression() : null;
			if (key != null && RateLimitExpression.isExpression(keyText)) {
				checkVariables("key", keyText, RateLimitExpression.parse(keyText).unknownVariables(parameters),
						names != null, parameters, element, problems);
			}
			else if (policy != null && policyKey != null) {
				checkVariables("key of policy '" + policy.name() + "' (ratelimit.policies." + policy.name() + ".key)",
						policyKey.text(), policyKey.unknownVariables(parameters), names != null, parameters, element,
						problems);
			}
			try {
				String costText = annotation.getString("cost");
				RateLimitCost cost = RateLimitCost.parse(costText);
				costs.add(cost);
				checkVariables("cost", costText, cost.unknownVariables(parameters), names != null, parameters, element,
						problems);
			}
			catch (IllegalArgumentException ex) {
				problems.add(new Problem(element, "cost " + ex.getMessage()));
			}
			conditions.add(condition(annotation.getString("when"), names != null, parameters, element, problems));
			if (policy != null) {
				applied.add(new AppliedPolicy(policy, key));
			}
		}
		if (problems.size() > before) {
			return NONE;
		}
		return new MethodLimits(applied, costs, conditions.toArray(new RateLimitCondition[0]),
				(names != null) ? names : new String[0]);
	}

	/**
	 * Parses the condition of an annotation: none when it is blank.
	 */
	private static @Nullable RateLimitCondition condition(String text, boolean namesKnown, Set<String> parameters,
			String element, List<Problem> problems) {
		if (text.isBlank()) {
			return null;
		}
		try {
			RateLimitCondition condition = RateLimitCondition.parse(text);
			checkVariables("when", text, condition.unknownVariables(parameters), namesKnown, parameters, element,
					problems);
			return condition;
		}
		catch (IllegalArgumentException ex) {
			problems.add(new Problem(element, "when " + ex.getMessage()));
			return null;
		}
	}

	private @Nullable Policy policy(MergedAnnotation<RateLimited> annotation, String element, List<Problem> problems) {
		String value = annotation.getString("value").trim();
		String policy = annotation.getString("policy").trim();
		if (!value.isEmpty() && !policy.isEmpty() && !value.equals(policy)) {
			problems.add(new Problem(element,
					"names two policies, '" + value + "' and '" + policy + "'; use value or policy, not both"));
			return null;
		}
		String name = value.isEmpty() ? policy : value;
		if (name.isEmpty()) {
			problems.add(new Problem(element, "names no policy; write @RateLimited(\"POLICY\")"));
			return null;
		}
		Policy found = this.policies.find(name);
		if (found == null) {
			problems.add(new Problem(element, "names policy '" + name + "', which is not defined under"
					+ " ratelimit.policies; defined policies: " + this.policies.names()));
		}
		return found;
	}

	private @Nullable KeyResolver key(String key, String element, List<Problem> problems) {
		if (key.isBlank()) {
			return null;
		}
		try {
			return this.keyResolvers.create(key);
		}
		catch (IllegalArgumentException ex) {
			problems.add(new Problem(element, "key " + ex.getMessage()));
			return null;
		}
	}

	/**
	 * Reports the variables an expression reads that no call of the method has: a
	 * misspelt parameter name, or any name where the parameter names are not known. Read
	 * as {@code null}, they would fail, or key every call alike, on every call.
	 */
	private static void checkVariables(String what, String text, Set<String> unknown, boolean namesKnown,
			Set<String> parameters, String element, List<Problem> problems) {
		String which = !namesKnown ? "the method's parameter names are not known (compile with -parameters)"
				: parameters.isEmpty() ? "the method has no parameters" : "its parameters are " + parameters;
		for (String variable : unknown) {
			problems.add(new Problem(element,
					what + " '" + text.trim() + "' reads #" + variable + ", which is not a parameter of the method: "
							+ which + "; besides them an expression can read #request, #principal and #args"));
		}
	}

	private static Set<String> known(String @Nullable [] names) {
		Set<String> known = new LinkedHashSet<>();
		if (names != null) {
			for (String name : names) {
				if (name != null) {
					known.add(name);
				}
			}
		}
		return known;
	}

	private static String parameterList(Method method) {
		StringBuilder list = new StringBuilder();
		for (Class<?> type : method.getParameterTypes()) {
			if (list.length() > 0) {
				list.append(", ");
			}
			list.append(type.getSimpleName());
		}
		return list.toString();
	}

	@Override
	public void afterSingletonsInstantiated() {
		ConfigurableListableBeanFactory factory = this.beanFactory;
		if (factory == null) {
			return;
		}
		List<Problem> problems = new ArrayList<>();
		for (String name : beanNames(factory)) {
			if (factory.containsBeanDefinition(name)
					&& factory.getBeanDefinition(name).getRole() == BeanDefinition.ROLE_INFRASTRUCTURE) {
				continue;
			}
			Class<?> type = targetClass(factory, name);
			if (type == null) {
				continue;
			}
			Class<?> userClass = ClassUtils.getUserClass(type);
			String typeName = userClass.getName();
			if (typeName.startsWith("org.springframework.") || typeName.startsWith("java.")) {
				continue;
			}
			List<Method> annotated = new ArrayList<>();
			try {
				ReflectionUtils.doWithMethods(userClass, (method) -> {
					MethodClassKey cacheKey = new MethodClassKey(method, userClass);
					MethodLimits limits = this.cache.get(cacheKey);
					if (limits == null) {
						limits = resolve(method, userClass, problems);
						if (limits != NONE) {
							this.cache.put(cacheKey, limits);
						}
					}
					if (limits != NONE) {
						this.anyAnnotated = true;
						annotated.add(method);
					}
				}, (method) -> !method.isSynthetic() && !method.isBridge()
						&& method.getDeclaringClass() != Object.class);
			}
			catch (IllegalStateException | LinkageError ex) {
				// methods that cannot be introspected (an optional dependency is missing)
				// cannot be proxied either
			}
			if (!annotated.isEmpty()) {
				checkIntercepted(factory, name, userClass, annotated, problems);
			}
		}
		if (!problems.isEmpty()) {
			throw new RateLimitConfigurationException(problems.stream().distinct().toList());
		}
	}

	/**
	 * Returns the class of a bean before any proxy, as the auto-proxy creator recorded
	 * it: the type of a bean proxied through its interfaces is a JDK proxy class, which
	 * carries no annotation.
	 */
	private static @Nullable Class<?> targetClass(ConfigurableListableBeanFactory factory, String name) {
		if (factory.containsBeanDefinition(name) && factory.getMergedBeanDefinition(name)
			.getAttribute(AutoProxyUtils.ORIGINAL_TARGET_CLASS_ATTRIBUTE) instanceof Class<?> original) {
			return original;
		}
		return factory.getType(name, false);
	}

	/**
	 * Returns the names of every bean: those defined, and the instances registered as
	 * they are, which no post-processor has seen.
	 */
	private static Set<String> beanNames(ConfigurableListableBeanFactory factory) {
		Set<String> names = new LinkedHashSet<>(List.of(factory.getBeanDefinitionNames()));
		names.addAll(List.of(factory.getSingletonNames()));
		return names;
	}

	/**
	 * Reports the annotated methods of a bean that no proxy will intercept, so that their
	 * limits would never apply: a bean that our advisor does not advise (registered as an
	 * instance, excluded from auto-proxying, or created before the auto-proxy creator), a
	 * final or private method of a class-based (CGLIB) proxy, which cannot override it,
	 * and a method that no proxied interface declares on an interface-based (JDK) proxy.
	 * A bean that is not created yet (lazy, or of another scope than singleton) is judged
	 * by its class alone: a final or private method that no interface declares is
	 * intercepted by no proxy.
	 */
	private static void checkIntercepted(ConfigurableListableBeanFactory factory, String name, Class<?> userClass,
			List<Method> annotated, List<Problem> problems) {
		Object bean = createdBean(factory, name);
		if (bean == null) {
			for (Method method : annotated) {
				if (notOverridable(method)
						&& !declaredByInterface(method, ClassUtils.getAllInterfacesForClass(userClass))) {
					problems.add(new Problem(element(method, userClass), notOverridableReason(method, userClass)));
				}
			}
			return;
		}
		if (!(bean instanceof Advised advised) || !advisedByRateLimited(advised)) {
			for (Method method : annotated) {
				problems.add(new Problem(element(method, userClass), "is on bean '" + name + "', which no proxy advises"
						+ " (a bean registered as a ready instance, one excluded from auto-proxying, or one created"
						+ " before the auto-proxy creator, such as a dependency of a BeanPostProcessor), so it would"
						+ " never apply; let the container create the bean (a @Bean method or a component) so that it"
						+ " is proxied"));
			}
			return;
		}
		boolean interfaceProxy = AopUtils.isJdkDynamicProxy(bean);
		for (Method method : annotated) {
			if (interfaceProxy && !declaredByInterface(method, advised.getProxiedInterfaces())) {
				problems.add(new Problem(element(method, userClass), "is on a method that no interface of bean '" + name
						+ "' declares, and the bean is proxied through its interfaces (a JDK proxy), which"
						+ " intercepts their methods only, so it would never apply; declare the method in an interface"
						+ " of the bean, or proxy its class (spring.aop.proxy-target-class=true, the default)"));
			}
			else if (!interfaceProxy && notOverridable(method)) {
				problems.add(new Problem(element(method, userClass), notOverridableReason(method, userClass)));
			}
		}
	}

	/**
	 * Returns a bean that the container has created, as callers see it (a proxy if it is
	 * proxied), or {@code null} if it is not created yet, is not a singleton, or is made
	 * by a factory bean.
	 */
	private static @Nullable Object createdBean(ConfigurableListableBeanFactory factory, String name) {
		if (!factory.containsSingleton(name) || factory.isFactoryBean(name)) {
			return null;
		}
		if (factory.containsBeanDefinition(name) && !factory.getBeanDefinition(name).isSingleton()) {
			return null;
		}
		return factory.getSingleton(name);
	}

	private static boolean advisedByRateLimited(Advised advised) {
		for (Advisor advisor : advised.getAdvisors()) {
			if (advisor instanceof RateLimitedAdvisor) {
				return true;
			}
		}
		return false;
	}

	private static boolean notOverridable(Method method) {
		return Modifier.isFinal(method.getModifiers()) || Modifier.isPrivate(method.getModifiers());
	}

	private static String notOverridableReason(Method method, Class<?> userClass) {
		if (Modifier.isPrivate(method.getModifiers())) {
			return "is on a private method, which no proxy intercepts, so it would never apply; rate-limit a public"
					+ " method of the bean instead";
		}
		if (!hasMethodAnnotation(method, userClass)) {
			return "is on the class of a final method, which a class-based (CGLIB) proxy cannot override, so it would"
					+ " never apply to that method, which the class-level annotation covers as a public method; remove"
					+ " 'final', or annotate the methods to limit one by one";
		}
		return "is on a final method, which a class-based (CGLIB) proxy cannot override, so it would never apply;"
				+ " remove 'final'";
	}

	private static boolean hasMethodAnnotation(Method method, Class<?> targetClass) {
		Method specific = AopUtils.getMostSpecificMethod(method, targetClass);
		return MergedAnnotations
			.from(specific, SearchStrategy.TYPE_HIERARCHY, RepeatableContainers.standardRepeatables())
			.isPresent(RateLimited.class);
	}

	private static boolean declaredByInterface(Method method, Class<?>[] interfaces) {
		for (Class<?> type : interfaces) {
			if (ClassUtils.hasMethod(type, method.getName(), method.getParameterTypes())) {
				return true;
			}
		}
		return false;
	}

	private static String element(Method method, Class<?> targetClass) {
		Method specific = AopUtils.getMostSpecificMethod(method, targetClass);
		return "@RateLimited on " + ClassUtils.getQualifiedMethodName(specific, targetClass) + "("
				+ parameterList(specific) + ")";
	}

}
