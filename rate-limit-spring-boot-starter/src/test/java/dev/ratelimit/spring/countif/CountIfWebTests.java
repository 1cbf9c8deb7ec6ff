package dev.ratelimit.spring.countif;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.webmvc.test.autoconfigure.AutoConfigureMockMvc;
import org.springframework.test.web.servlet.MockMvc;
import org.springframework.test.web.servlet.MvcResult;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Policies charged by the response ({@code count-if}) on a login: a failed login (401)
 * counts, a successful one never does, and a caller with no failures left is refused
 * before the handler runs, even with the right password. Each test logs in from its own
 * client address.
 */
@SpringBootTest(classes = LoginTestApplication.class, properties = { "ratelimit.client.trusted-proxies=127.0.0.1",
		"ratelimit.policies.login-by-user.key=#{#request.getParameter('username')}",
		"ratelimit.policies.login-by-user.count-if=#{#response.status == 401}",
		"ratelimit.policies.login-by-user.limits[0].algorithm=fixed-window",
		"ratelimit.policies.login-by-user.limits[0].rate=5/15m", "ratelimit.policies.login-by-ip.key=ip",
		"ratelimit.policies.login-by-ip.count-if=#{#response.status == 401}",
		"ratelimit.policies.login-by-ip.limits[0].algorithm=fixed-window",
		"ratelimit.policies.login-by-ip.limits[0].rate=5/15m", "ratelimit.filters[0].patterns=/login,/login/gated",
		"ratelimit.filters[0].methods=POST", "ratelimit.filters[0].policies=login-by-user,login-by-ip",
		"ratelimit.policies.login-penalized.key=#{#request.getParameter('username')}",
		"ratelimit.policies.login-penalized.count-if=#{#response.status == 401}",
		"ratelimit.policies.login-penalized.penalty=1h",
		"ratelimit.policies.login-penalized.limits[0].algorithm=fixed-window",
		"ratelimit.policies.login-penalized.limits[0].rate=2/15m", "ratelimit.filters[1].patterns=/login/penalized",
		"ratelimit.filters[1].policies=login-penalized",
		"ratelimit.policies.errors-budget.key=#{#request.getParameter('username')}",
		"ratelimit.policies.errors-budget.count-if=#{#response.status == 401}",
		"ratelimit.policies.errors-budget.count-if-mode=check-then-charge",
		"ratelimit.policies.errors-budget.limits[0].algorithm=fixed-window",
		"ratelimit.policies.errors-budget.limits[0].rate=5/15m",
		"ratelimit.filters[2].patterns=/login/budget,/login/budget/gated", "ratelimit.filters[2].methods=POST",
		"ratelimit.filters[2].policies=errors-budget" })
@AutoConfigureMockMvc
class CountIfWebTests {

	@Autowired
	private MockMvc mvc;

	@Autowired
	private LoginTestApplication.LoginController controller;

	@Test
	void fiveFailedLoginsThenA429EvenWithTheRightPassword() throws Exception {
		LoginClient client = new LoginClient(this.mvc, "192.0.2.1");
		for (int i = 0; i < 5; i++) {
			MvcResult failed = client.login("alice", "guess-" + i);
			assertThat(failed.getResponse().getStatus()).isEqualTo(401);
			// what is left once this failure's permit is reserved, which it then keeps
			assertThat(failed.getResponse().getHeader("RateLimit")).contains(";r=" + (4 - i));
		}
		MvcResult refused = client.login("alice", LoginTestApplication.PASSWORD);
		assertThat(refused.getResponse().getStatus()).isEqualTo(429);
		assertThat(refused.getResponse().getHeader("Retry-After")).isNotNull();
		assertThat(refused.getResponse().getContentAsString()).contains("login-by-user");
		// another user from elsewhere is not affected
		assertThat(new LoginClient(this.mvc, "192.0.2.2").login("bob", LoginTestApplication.PASSWORD)
			.getResponse()
			.getStatus()).isEqualTo(200);
	}

	@Test
	void theRefusalOfASpentCallerStartsThePolicysPenalty() throws Exception {
		LoginClient client = new LoginClient(this.mvc, "192.0.2.7");
		for (int i = 0; i < 2; i++) {
			assertThat(client.login("/login/penalized", "grace", "guess").getResponse().getStatus()).isEqualTo(401);
		}
		MvcResult refused = client.login("/login/penalized", "grace", LoginTestApplication.PASSWORD);
		assertThat(refused.getResponse().getStatus()).isEqualTo(429);
		// the penalty's hour, not the window's 15 minutes
		assertThat(Long.parseLong(refused.getResponse().getHeader("Retry-After"))).isGreaterThan(3000);
	}

	@Test
	void successfulLoginsNeverCount() throws Exception {
		LoginClient client = new LoginClient(this.mvc, "192.0.2.3");
		for (int i = 0; i < 20; i++) {
			assertThat(client.login("carol", LoginTestApplication.PASSWORD).getResponse().getStatus()).isEqualTo(200);
		}
		for (int i = 0; i < 5; i++) {
			assertThat(client.login("carol", "guess-" + i).getResponse().getStatus()).isEqualTo(401);
		}
		assertThat(client.login("carol", "guess-5").getResponse().getStatus()).isEqualTo(429);
	}

	@Test
	void thePolicyByAddressStopsGuessesSpreadOverUsernames() throws Exception {
		LoginClient client = new LoginClient(this.mvc, "192.0.2.4");
		for (int i = 0; i < 5; i++) {
			assertThat(client.login("user-" + i, "guess").getResponse().getStatus()).isEqualTo(401);
		}
		MvcResult refused = client.login("user-5", LoginTestApplication.PASSWORD);
		assertThat(refused.getResponse().getStatus()).isEqualTo(429);
		assertThat(refused.getResponse().getContentAsString()).contains("login-by-ip").doesNotContain("login-by-user");
	}

	@Test
	void anAnnotatedHandlerIsCheckedBeforeAndChargedByItsResponse() throws Exception {
		LoginClient client = new LoginClient(this.mvc, "192.0.2.5");
		for (int i = 0; i < 10; i++) {
			assertThat(
					client.login("/login/annotated", "dave", LoginTestApplication.PASSWORD).getResponse().getStatus())
				.isEqualTo(200);
		}
		for (int i = 0; i < 5; i++) {
			assertThat(client.login("/login/annotated", "dave", "guess-" + i).getResponse().getStatus()).isEqualTo(401);
		}
		MvcResult refused = client.login("/login/annotated", "dave", LoginTestApplication.PASSWORD);
		assertThat(refused.getResponse().getStatus()).isEqualTo(429);
		assertThat(refused.getResponse().getContentAsString()).contains("login-by-user");
	}

	@Test
	void aCheckThenChargePolicyShowsWhatWasLeftBeforeEachFailureItCharges() throws Exception {
		LoginClient client = new LoginClient(this.mvc, "192.0.2.8");
		for (int i = 0; i < 5; i++) {
			MvcResult failed = client.login("/login/budget", "frank", "guess-" + i);
			assertThat(failed.getResponse().getStatus()).isEqualTo(401);
			assertThat(failed.getResponse().getHeader("RateLimit")).contains(";r=" + (5 - i));
		}
		assertThat(client.login("/login/budget", "frank", LoginTestApplication.PASSWORD).getResponse().getStatus())
			.isEqualTo(429);
	}

	/**
	 * Check-then-charge admits at most one extra request per request in flight for a key:
	 * with one failure left, N failing logins in flight together all pass the check, and
	 * all are admitted; then the key is spent. (Reserving, the default, admits exactly
	 * what is left: CountIfFinalStatusTests.)
	 */
	@Test
	void checkThenChargeLetsRequestsInFlightTogetherOverAdmitAtMostOneEachThenTheKeyIsSpent() throws Exception {
		LoginClient client = new LoginClient(this.mvc, "192.0.2.6");
		for (int i = 0; i < 4; i++) {
			assertThat(client.login("/login/budget", "erin", "guess-" + i).getResponse().getStatus()).isEqualTo(401);
		}
		long remaining = 1;
		int inFlight = 6;
		this.controller.arm(inFlight);
		List<Future<MvcResult>> logins = new ArrayList<>();
		ExecutorService executor = Executors.newFixedThreadPool(inFlight);
		try {
			for (int i = 0; i < inFlight; i++) {
				logins.add(executor.submit(() -> client.login("/login/budget/gated", "erin", "guess")));
			}
			int admitted = 0;
			for (Future<MvcResult> login : logins) {
				if (login.get().getResponse().getStatus() == 401) {
					admitted++;
				}
			}
			assertThat(admitted).isLessThanOrEqualTo((int) (remaining + inFlight - 1)).isEqualTo(inFlight);
		}
		finally {
			executor.shutdownNow();
		}
		assertThat(client.login("/login/budget", "erin", LoginTestApplication.PASSWORD).getResponse().getStatus())
			.isEqualTo(429);
	}

}
