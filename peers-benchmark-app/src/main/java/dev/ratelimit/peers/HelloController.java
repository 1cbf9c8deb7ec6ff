package dev.ratelimit.peers;

import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;

/**
 * The one limited endpoint: a small JSON body, so that a request costs little beyond
 * Tomcat, Spring MVC and the limiter.
 */
@RestController
class HelloController {

	private static final Hello HELLO = new Hello("hello");

	@GetMapping("/api/hello")
	Hello hello() {
		return HELLO;
	}

	record Hello(String message) {
	}

}
