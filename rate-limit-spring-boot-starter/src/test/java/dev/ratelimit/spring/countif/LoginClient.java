package dev.ratelimit.spring.countif;

import org.springframework.test.web.servlet.MockMvc;
import org.springframework.test.web.servlet.MvcResult;

import static org.springframework.test.web.servlet.request.MockMvcRequestBuilders.post;

/**
 * Logs in through MockMvc, which returns once the filter has settled the request, from a
 * client address given in {@code X-Forwarded-For} (the tests trust the loopback proxy).
 */
final class LoginClient {

	private final MockMvc mvc;

	private final String address;

	LoginClient(MockMvc mvc, String address) {
		this.mvc = mvc;
		this.address = address;
	}

	MvcResult login(String path, String username, String password) throws Exception {
		return this.mvc
			.perform(post(path).param("username", username)
				.param("password", password)
				.header("X-Forwarded-For", this.address))
			.andReturn();
	}

	MvcResult login(String username, String password) throws Exception {
		return login("/login", username, password);
	}

}
