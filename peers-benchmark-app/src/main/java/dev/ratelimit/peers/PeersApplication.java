package dev.ratelimit.peers;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;

/**
 * Starts the application in the variant its Spring profile names.
 */
@SpringBootApplication
public class PeersApplication {

	public static void main(String[] args) {
		SpringApplication.run(PeersApplication.class, args);
	}

}
