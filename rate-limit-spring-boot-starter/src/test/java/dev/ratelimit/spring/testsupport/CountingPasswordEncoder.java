package dev.ratelimit.spring.testsupport;

import java.util.concurrent.atomic.AtomicInteger;

import org.springframework.security.crypto.password.PasswordEncoder;

/**
 * A password encoder that counts its checks: each is the work a guessed password costs
 * the application (a bcrypt check, in a real one). Stores passwords as {@code {plain}}.
 */
public final class CountingPasswordEncoder implements PasswordEncoder {

	private final AtomicInteger checks = new AtomicInteger();

	@Override
	public String encode(CharSequence rawPassword) {
		return "{plain}" + rawPassword;
	}

	@Override
	public boolean matches(CharSequence rawPassword, String encodedPassword) {
		this.checks.incrementAndGet();
		return encodedPassword.equals(encode(rawPassword));
	}

	/**
	 * Returns the checks made so far.
	 * @return the number of {@link #matches} calls
	 */
	public int checks() {
		return this.checks.get();
	}

}
