package dev.sluice.compat.kafkastreams;

import java.io.IOException;
import java.io.Reader;
import java.io.Writer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.LocalDate;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Properties;

/**
 * The integration suite's outcomes, part by part, kept in the repository ({@code
 * compat-tests/integration-results/<part>/}). The whole suite takes longer on two cores than one run of
 * {@code make compat} should, so each run saves the parts it ran, and the report holds every part saved,
 * each with the build it ran on and the day: a part run again replaces its earlier outcomes.
 */
final class PartResults {

    private static final String BASELINE = "baseline.tsv";
    private static final String SLUICE = "sluice.tsv";
    private static final String RUN = "run.properties";
    private static final String BASELINE_RUN = "baseline.run";

    /**
     * A part's saved outcomes on both targets, with the build (a {@code git describe}) and day they ran; where
     * the baseline's outcomes were taken from an earlier run ({@link #save}), which run that was.
     */
    record Saved(IntegrationParts.Part part, String build, String day, List<TestOutcome> baseline,
                 long baselineSeconds, List<TestOutcome> sluice, long sluiceSeconds, Optional<String> baselineRun) {

        /** The build and day it ran, and the baseline's run where it was an earlier one. */
        String ranOn() {
            return build + ", " + day + baselineRun.map(run -> "; baseline's outcomes from its run on " + run).orElse("");
        }

        /**
         * The run that produced its baseline's outcomes: this one, or the earlier run it took them from, so
         * that outcomes carried on from part run to part run keep naming the run where the baseline ran.
         */
        String baselineRanOn() {
            return baselineRun.orElse(build + ", " + day);
        }
    }

    private PartResults() {
    }

    /**
     * Saves a part's runs on both targets, replacing what was saved for it before; {@code baselineRun} names
     * the earlier run the baseline's outcomes were taken from, if they were not run now.
     */
    static void save(final Path directory, final IntegrationParts.Part part, final String build,
                     final SuiteResult.Run baseline, final SuiteResult.Run sluice, final Optional<String> baselineRun)
        throws IOException {
        final Path partDirectory = Files.createDirectories(directory.resolve(part.name()));
        Files.write(partDirectory.resolve(BASELINE), baseline.outcomes().stream().map(TestOutcome::line).toList());
        Files.write(partDirectory.resolve(SLUICE), sluice.outcomes().stream().map(TestOutcome::line).toList());
        final Properties run = new Properties();
        run.setProperty("build", build);
        run.setProperty("day", LocalDate.now(ZoneOffset.UTC).toString());
        run.setProperty("baseline.seconds", Long.toString(baseline.seconds()));
        run.setProperty("sluice.seconds", Long.toString(sluice.seconds()));
        baselineRun.ifPresent(earlier -> run.setProperty(BASELINE_RUN, earlier));
        try (Writer out = Files.newBufferedWriter(partDirectory.resolve(RUN))) {
            run.store(out, null);
        }
    }

    /** Every part saved in {@code directory}, in the order of {@link IntegrationParts#ALL}. */
    static List<Saved> loadAll(final Path directory) throws IOException {
        final List<Saved> saved = new ArrayList<>();
        for (final IntegrationParts.Part part : IntegrationParts.ALL) {
            load(directory, part).ifPresent(saved::add);
        }
        return saved;
    }

    /** The part as saved in {@code directory}, if it was. */
    static Optional<Saved> load(final Path directory, final IntegrationParts.Part part) throws IOException {
        final Path partDirectory = directory.resolve(part.name());
        if (!Files.exists(partDirectory.resolve(RUN))) {
            return Optional.empty();
        }
        final Properties run = new Properties();
        try (Reader in = Files.newBufferedReader(partDirectory.resolve(RUN))) {
            run.load(in);
        }
        return Optional.of(new Saved(part, run.getProperty("build"), run.getProperty("day"),
            TestOutcome.read(partDirectory.resolve(BASELINE)), Long.parseLong(run.getProperty("baseline.seconds")),
            TestOutcome.read(partDirectory.resolve(SLUICE)), Long.parseLong(run.getProperty("sluice.seconds")),
            Optional.ofNullable(run.getProperty(BASELINE_RUN))));
    }
}
