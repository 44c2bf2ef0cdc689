package dev.sluice.compat.kafkastreams;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;

/**
 * {@code make compat}: runs the suites on both targets and writes the report.
 * Arguments: the directory holding the build's class path files, this harness's classes, a work
 * directory for the runs, the report to write, the section the exactly-once crash check
 * ({@code compat-tests/fault-suite}) wrote for it in the same {@code make compat}, the directory the
 * integration suite's parts are saved in ({@link PartResults}), the build being run (a {@code git describe}),
 * and, optionally, the integration suite's parts to run, comma-separated ({@link IntegrationParts}; default:
 * all).
 *
 * <p>With {@code -D}{@value #WITHOUT_NATIVE_LIBRARY}{@code =true} the Sluice target's class path lacks Sluice's
 * native library, as on a platform the jar carries none for, so applications there run on Apache Kafka Streams'
 * own runtime, which the drop-in jar carries ({@code make compat-fallback}). With {@code -D}{@value
 * #SAVED_BASELINES}{@code =<directory>}, an integration part saved there keeps the baseline's outcomes of that
 * run instead of running them again (the fallback's baseline is the one {@code make compat} ran).
 */
public final class CompatMain {

    static final String WITHOUT_NATIVE_LIBRARY = "compat.sluice.withoutNativeLibrary";
    /** A directory of saved integration parts whose baseline outcomes are taken instead of running them again. */
    static final String SAVED_BASELINES = "compat.baseline.savedIn";

    private CompatMain() {
    }

    public static void main(final String[] args) throws Exception {
        final List<IntegrationParts.Part> parts = IntegrationParts.named(args.length > 7 ? args[7] : "");
        final Path workDirectory = Path.of(args[2]).toAbsolutePath();
        final boolean withoutNativeLibrary = Boolean.getBoolean(WITHOUT_NATIVE_LIBRARY);
        final Classpaths built = Classpaths.load(Path.of(args[0]), Path.of(args[1]));
        final Classpaths classpaths = withoutNativeLibrary
            ? built.withoutNativeLibrary(workDirectory.resolve("without-native-library")) : built;
        final String crashCheckSection = Files.readString(Path.of(args[4]));
        final Optional<Path> savedBaselines = Optional.ofNullable(System.getProperty(SAVED_BASELINES)).map(Path::of);
        final CompatRun.Results results = new CompatRun(classpaths, workDirectory, Path.of(args[5]), args[6],
            savedBaselines).run(Suite.all(parts));
        Files.writeString(Path.of(args[3]), Report.of(results, crashCheckSection, withoutNativeLibrary));
        for (final SuiteResult suite : results.suites()) {
            System.out.println(Summary.line(suite));
        }
        System.out.println("Report: " + args[3]);
    }
}
