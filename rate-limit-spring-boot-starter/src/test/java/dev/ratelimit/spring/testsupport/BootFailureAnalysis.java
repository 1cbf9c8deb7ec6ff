package dev.ratelimit.spring.testsupport;

import java.util.List;

import org.jspecify.annotations.Nullable;

import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.diagnostics.FailureAnalyzer;
import org.springframework.core.io.support.SpringFactoriesLoader;
import org.springframework.core.io.support.SpringFactoriesLoader.ArgumentResolver;
import org.springframework.core.io.support.SpringFactoriesLoader.FailureHandler;

/**
 * What Spring Boot prints for a start-up failure: the analysis of the first of its
 * failure analyzers that explains it.
 */
public final class BootFailureAnalysis {

	private BootFailureAnalysis() {
	}

	/**
	 * Returns the analysis of the first failure analyzer that explains a failure.
	 * @param failure the failure
	 * @param arguments what the analyzers' constructors may take (such as the bean
	 * factory); an analyzer that needs something else is left out, as Boot does
	 * @return the analysis, or {@code null} if none explains the failure
	 */
	public static @Nullable FailureAnalysis of(Throwable failure, ArgumentResolver arguments) {
		List<FailureAnalyzer> analyzers = SpringFactoriesLoader
			.forDefaultResourceLocation(BootFailureAnalysis.class.getClassLoader())
			.load(FailureAnalyzer.class, arguments, FailureHandler.handleMessage((message, cause) -> {
				// as Boot does: an analyzer that cannot be created here is left out
			}));
		for (FailureAnalyzer analyzer : analyzers) {
			try {
				FailureAnalysis analysis = analyzer.analyze(failure);
				if (analysis != null) {
					return analysis;
				}
			}
			catch (RuntimeException ex) {
				// as Boot does: an analyzer that cannot analyze is skipped
			}
		}
		return null;
	}

}
