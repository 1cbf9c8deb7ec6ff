package dev.ratelimit.spring.web;

import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;

import org.springframework.boot.webmvc.error.DefaultErrorAttributes;
import org.springframework.core.annotation.AnnotationAwareOrderComparator;
import org.springframework.web.servlet.HandlerExceptionResolver;
import org.springframework.web.servlet.handler.HandlerExceptionResolverComposite;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Where the {@link PendingLimitsExceptionResolver} runs among the exception resolvers of
 * the {@code DispatcherServlet}, which sorts them by their order.
 */
class PendingLimitsExceptionResolverTests {

	@Test
	void runsRightAfterTheErrorAttributesRecordTheFailureAndBeforeTheResolversThatAnswerIt() {
		PendingLimitsExceptionResolver pending = new PendingLimitsExceptionResolver();
		DefaultErrorAttributes errorAttributes = new DefaultErrorAttributes();
		// as Spring MVC's configuration orders the resolvers of @ExceptionHandler
		// methods, @ResponseStatus and so on
		HandlerExceptionResolverComposite answering = new HandlerExceptionResolverComposite();
		answering.setOrder(0);
		List<HandlerExceptionResolver> resolvers = new ArrayList<>(List.of(pending, answering, errorAttributes));
		AnnotationAwareOrderComparator.sort(resolvers);
		assertThat(resolvers).containsExactly(errorAttributes, pending, answering);
	}

}
