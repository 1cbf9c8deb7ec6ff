package dev.ratelimit.spring.docs;

import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;

import dev.ratelimit.spring.annotation.RateLimited;

/**
 * The controller of docs/TESTING.md's examples: {@code /greetings} is limited by a filter
 * rule, {@code /greetings/annotated} by {@code @RateLimited}.
 */
@RestController
class GreetingController {

	@GetMapping("/greetings")
	String greet() {
		return "hello";
	}

	@RateLimited("greetings")
	@GetMapping("/greetings/annotated")
	String greetAnnotated() {
		return "hello";
	}

}
