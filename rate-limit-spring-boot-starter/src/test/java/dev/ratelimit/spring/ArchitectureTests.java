package dev.ratelimit.spring;

import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.library.dependencies.SliceAssignment;
import com.tngtech.archunit.library.dependencies.SliceIdentifier;
import org.junit.jupiter.api.Test;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;

/**
 * The starter's layering, as docs/ARCHITECTURE.md describes it: checked on the main
 * classes.
 */
class ArchitectureTests {

	private static final String STARTER = "dev.ratelimit.spring";

	private static final JavaClasses classes = new ClassFileImporter()
		.withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
		.importPackages(STARTER);

	@Test
	void starterPackagesHaveNoCycles() {
		slices().assignedFrom(new TopLevelPackages()).should().beFreeOfCycles().check(classes);
	}

	@Test
	void rootPackageImportsNoServletApi() {
		noServletApiIn(STARTER);
	}

	@Test
	void keyResolversImportNoServletApi() {
		noServletApiIn(STARTER + ".key..");
	}

	@Test
	void annotationImportsNoServletApi() {
		noServletApiIn(STARTER + ".annotation..");
	}

	@Test
	void reactiveStackImportsNoServletApi() {
		noServletApiIn(STARTER + ".web.reactive..");
	}

	@Test
	void decisionPathAndServletStackImportNoWebFlux() {
		noClasses().that()
			.resideInAnyPackage(STARTER, STARTER + ".key..")
			.or()
			.resideInAPackage(STARTER + ".web")
			.should()
			.dependOnClassesThat()
			.resideInAnyPackage("org.springframework.web.reactive..", "org.springframework.web.server..", "reactor..",
					STARTER + ".web.reactive..")
			.because("a servlet application, or none, runs without Spring WebFlux and Project Reactor")
			.check(classes);
	}

	/**
	 * The decision path serves any web stack, or none: the servlet API and Spring MVC
	 * belong to {@code web} and the auto-configuration that wires it.
	 */
	private static void noServletApiIn(String packageIdentifier) {
		noClasses().that()
			.resideInAPackage(packageIdentifier)
			.should()
			.dependOnClassesThat()
			.resideInAnyPackage("jakarta.servlet..", "org.springframework.web.servlet..")
			.check(classes);
	}

	@Test
	void starterUsesNoCoreInternals() {
		noClasses().should().dependOnClassesThat().resideInAPackage("dev.ratelimit.core.internal..").check(classes);
	}

	@Test
	void annotationDoesNotDependOnWeb() {
		noClasses().that()
			.resideInAPackage(STARTER + ".annotation..")
			.should()
			.dependOnClassesThat()
			.resideInAPackage(STARTER + ".web..")
			.check(classes);
	}

	@Test
	void onlyTheAutoConfigurationDependsOnTheAutoConfiguration() {
		noClasses().that()
			.resideOutsideOfPackage(STARTER + ".autoconfigure..")
			.should()
			.dependOnClassesThat()
			.resideInAPackage(STARTER + ".autoconfigure..")
			.check(classes);
	}

	/**
	 * One slice per package directly under the starter's, with their sub-packages, and
	 * one for the starter's own package, which a pattern such as
	 * {@code dev.ratelimit.spring.(*)..} would leave out.
	 */
	private static final class TopLevelPackages implements SliceAssignment {

		@Override
		public SliceIdentifier getIdentifierOf(JavaClass javaClass) {
			String name = javaClass.getPackageName();
			if (name.equals(STARTER)) {
				return SliceIdentifier.of(STARTER);
			}
			if (!name.startsWith(STARTER + ".")) {
				return SliceIdentifier.ignore();
			}
			String rest = name.substring(STARTER.length() + 1);
			int dot = rest.indexOf('.');
			return SliceIdentifier.of(STARTER + "." + ((dot < 0) ? rest : rest.substring(0, dot)));
		}

		@Override
		public String getDescription() {
			return "packages of " + STARTER;
		}

	}

}
