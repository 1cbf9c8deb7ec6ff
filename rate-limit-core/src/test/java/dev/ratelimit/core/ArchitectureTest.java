package dev.ratelimit.core;

import java.util.stream.Stream;

import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.domain.JavaCodeUnit;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.lang.ArchCondition;
import com.tngtech.archunit.lang.ConditionEvents;
import com.tngtech.archunit.lang.SimpleConditionEvent;
import com.tngtech.archunit.library.dependencies.SliceAssignment;
import com.tngtech.archunit.library.dependencies.SliceIdentifier;
import org.junit.jupiter.api.Test;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.codeUnits;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;

/**
 * The core's layering, as docs/ARCHITECTURE.md describes it: checked on the main classes.
 */
class ArchitectureTest {

	private static final String CORE = "dev.ratelimit.core";

	private static final String INTERNAL = CORE + ".internal..";

	private static final JavaClasses classes = new ClassFileImporter()
		.withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
		.importPackages(CORE);

	/**
	 * Every class of the project on this module's class path, tests left out: the core's
	 * own, and any other module's that depends on it.
	 */
	private static final JavaClasses project = new ClassFileImporter()
		.withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
		.importPackages("dev.ratelimit");

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
			.resideInAnyPackage("org.springframework.data.redis..", "org.springframework.dao..", "io.lettuce..",
					"redis.clients..")
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

	@Test
	void onlyTheCoreUsesItsInternals() {
		noClasses().that()
			.resideOutsideOfPackage(CORE + "..")
			.should()
			.dependOnClassesThat()
			.resideInAPackage(INTERNAL)
			// The core's class path holds no other module's classes, so here this finds
			// none to check; the next rule is what keeps them from needing the internals.
			.allowEmptyShould(true)
			.check(project);
	}

	@Test
	void noPublicMethodOutsideTheInternalsTakesOrReturnsAnInternalType() {
		codeUnits().that()
			.arePublic()
			.and()
			.areDeclaredInClassesThat()
			.arePublic()
			.and()
			.areDeclaredInClassesThat()
			.resideOutsideOfPackage(INTERNAL)
			.should(new ArchCondition<JavaCodeUnit>("take or return no type of " + INTERNAL) {

				@Override
				public void check(JavaCodeUnit unit, ConditionEvents events) {
					Stream.concat(Stream.of(unit.getRawReturnType()), unit.getRawParameterTypes().stream())
						.filter((type) -> type.getPackageName().startsWith(CORE + ".internal"))
						.forEach((type) -> events
							.add(SimpleConditionEvent.violated(unit, unit.getFullName() + " uses " + type.getName())));
				}

			})
			.check(classes);
	}

	@Test
	void theApiPackageUsesNoInternals() {
		noClasses().that()
			.resideInAPackage(CORE)
			.should()
			.dependOnClassesThat()
			.resideInAPackage(INTERNAL)
			.check(classes);
	}

	@Test
	void theInternalsDependOnNoBackend() {
		noClasses().that()
			.resideInAPackage(INTERNAL)
			.should()
			.dependOnClassesThat()
			.resideInAnyPackage(CORE + ".memory..", CORE + ".redis..", CORE + ".failure..")
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
