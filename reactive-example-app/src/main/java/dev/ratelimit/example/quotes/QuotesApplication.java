package dev.ratelimit.example.quotes;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.context.annotation.Bean;

import dev.ratelimit.example.quotes.market.Market;

/**
 * Runs the reactive example: a quotes API served by WebFlux on Netty.
 */
@SpringBootApplication(proxyBeanMethods = false)
public class QuotesApplication {

	public static void main(String[] args) {
		SpringApplication.run(QuotesApplication.class, args);
	}

	@Bean
	Market market() {
		return Market.simulated();
	}

}
