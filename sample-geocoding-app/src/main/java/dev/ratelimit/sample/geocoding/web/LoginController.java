package dev.ratelimit.sample.geocoding.web;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.Map;

import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.http.ProblemDetail;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;

import dev.ratelimit.sample.geocoding.security.ApiKeyProperties;

/**
 * Signs a user in with a username and password ({@code geocoding.logins}), answering its
 * API key, or {@code 401}. The rate limits on failed sign-ins live in the configuration
 * ({@code login-failures-*} policies): this controller only answers.
 */
@RestController
@RequestMapping("/api")
public class LoginController {

	private final ApiKeyProperties properties;

	public LoginController(ApiKeyProperties properties) {
		this.properties = properties;
	}

	@PostMapping(path = "/login", consumes = MediaType.APPLICATION_FORM_URLENCODED_VALUE)
	public ResponseEntity<?> login(@RequestParam String username, @RequestParam String password) {
		ApiKeyProperties.Login login = this.properties.getLogins().get(username);
		// compared in constant time, and against something even for an unknown user
		String expected = (login != null) ? login.getPassword() : "";
		boolean matches = MessageDigest.isEqual(expected.getBytes(StandardCharsets.UTF_8),
				password.getBytes(StandardCharsets.UTF_8));
		if (login == null || !matches) {
			ProblemDetail problem = ProblemDetail.forStatusAndDetail(HttpStatus.UNAUTHORIZED,
					"Wrong username or password.");
			problem.setTitle("Sign-in failed");
			return ResponseEntity.status(HttpStatus.UNAUTHORIZED)
				.contentType(MediaType.APPLICATION_PROBLEM_JSON)
				.body(problem);
		}
		return ResponseEntity.ok(Map.of("username", username, "apiKey", login.getApiKey()));
	}

}
