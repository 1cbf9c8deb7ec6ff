package dev.ratelimit.core;

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
 * The core's layering, as docs/ARCHITECTURE.md describes it: checked on the main classes.
 */
class ArchitectureTest {

	private static final String CORE = "dev.ratelimit.core";

	private static final JavaClasses classes = new ClassFileImporter()
		.withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
		.importPackages(CORE);

	@Test
	void corePackagesHaveNoCycles() {
		slices().assignedFrom(new TopLevelPackages()).should().beFreeOfCycles().check(classes);
	}

	@Test
	void coreImportsNoSpringWebServletOrBoot() {
		noClasses().should()
			.dependOnClassesThat()
			.resideInAnyPackage("org.springframework.web..", "jakarta.servlet..", "org.springframework.boot..")
			.check(classes);
	}

	@Test
	void onlyTheRedisBackendImportsRedisLibraries() {
		noClasses().that()
			.resideOutsideOfPackage(CORE + ".redis..")
			.should()
			.dependOnClassesThat()
			.resideInAnyPackage("org.springframework.data.redis..", "org.springframework.dao..", "io.lettuce..")
			.check(classes);
	}

	@Test
	void theFailurePolicyKnowsNoStore() {
		noClasses().that()
			.resideInAPackage(CORE + ".failure..")
			.should()
			.dependOnClassesThat()
			.resideInAPackage(CORE + ".redis..")
			.check(classes);
	}

	/**
	 * One slice per package directly under the core, with their sub-packages, and one for
	 * the core's own package, which a pattern such as {@code dev.ratelimit.core.(*)..}
	 * would leave out.
	 */
	private static final class TopLevelPackages implements SliceAssignment {

		@Override
		public SliceIdentifier getIdentifierOf(JavaClass javaClass) {
			String name = javaClass.getPackageName();
			if (name.equals(CORE)) {
				return SliceIdentifier.of(CORE);
			}
			if (!name.startsWith(CORE + ".")) {
				return SliceIdentifier.ignore();
			}
			String rest = name.substring(CORE.length() + 1);
			int dot = rest.indexOf('.');
			return SliceIdentifier.of(CORE + "." + ((dot < 0) ? rest : rest.substring(0, dot)));
		}

		@Override
		public String getDescription() {
			return "packages of " + CORE;
		}

	}

}
