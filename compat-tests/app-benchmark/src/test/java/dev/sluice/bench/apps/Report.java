package dev.sluice.bench.apps;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.ToDoubleFunction;

/**
 * The benchmark's results: a line per run as it ends, then per workload the medians of each runtime's
 * right runs and the ratio of Sluice's to the better Apache variant's (lower is better for start-up, CPU,
 * memory and latency, higher for throughput).
 */
final class Report {

    private final List<RunResult> results = new ArrayList<>();
    private final int plannedRuns;

    Report(final int plannedRuns) {
        this.plannedRuns = plannedRuns;
    }

    List<RunResult> results() {
        return results;
    }

    void add(final RunResult result) {
        results.add(result);
        System.out.printf(Locale.ROOT, "[%d/%d] %-26s %-36s %s%n", results.size(), plannedRuns, result.workload().id(),
            result.variant().description(), describe(result));
    }

    private static String describe(final RunResult result) {
        if (!result.right()) {
            return (result.paced() ? "paced" : "timed") + ": WRONG, not timed: " + result.failure();
        }
        final StringBuilder line = new StringBuilder(String.format(Locale.ROOT,
            "%s: %.1f s, RUNNING after %.1f s, %,.0f records/s, %.1f µs CPU/record, peak RSS %.0f MB (Java heap %.0f MB at the "
                + "end), %,d output records",
            result.paced() ? "paced" : "timed", result.wallSeconds(), result.startSeconds(), result.recordsPerSecond(),
            result.cpuMicrosPerRecord(), result.peakRssMegabytes(), result.heapMegabytes(), result.outputRecords()));
        if (result.paced()) {
            line.append(String.format(Locale.ROOT, ", latency P50 %.0f ms, P99 %.0f ms, max %.0f ms (%d records)",
                result.latencyMillis(0.5), result.latencyMillis(0.99), result.latencyMillis(1.0), result.latenciesMillis().length));
        }
        return line.append(" | CPU s by thread: ").append(threadGroups(result, 8)).toString();
    }

    /** The {@code count} thread groups that used the most CPU, with their CPU seconds; none under 0.05 s. */
    private static String threadGroups(final RunResult result, final int count) {
        final StringBuilder groups = new StringBuilder();
        result.sample().threadCpuSeconds().entrySet().stream()
            .filter(group -> group.getValue() >= 0.05)
            .sorted(Map.Entry.<String, Double>comparingByValue().reversed()).limit(count)
            .forEach(group -> groups.append(String.format(Locale.ROOT, "%s%s %.1f", groups.isEmpty() ? "" : ", ",
                group.getKey(), group.getValue())));
        return groups.toString();
    }

    /** The tables of medians, as Markdown; also written to {@code file}. */
    String summary(final List<Workload> workloads, final Path file) {
        final StringBuilder out = new StringBuilder("# Application benchmark: medians of right runs\n\n");
        out.append("| workload | runtime | right runs | wall s | start s | records/s | CPU µs/record | peak RSS MB "
            + "| of which Java heap MB | paced P50 ms | paced P99 ms | paced max ms | CPU s by thread (timed, median run) |\n");
        out.append("|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
        for (final Workload workload : workloads) {
            final Map<Variant, Medians> byVariant = new TreeMap<>();
            for (final Variant variant : Variant.values()) {
                final List<RunResult> runs = results.stream()
                    .filter(result -> result.workload().equals(workload) && result.variant() == variant).toList();
                if (!runs.isEmpty()) {
                    byVariant.put(variant, new Medians(runs));
                }
            }
            byVariant.forEach((variant, medians) -> out.append(medians.row(workload, variant)));
            final Medians sluice = byVariant.get(Variant.SLUICE);
            final List<Medians> apache = byVariant.entrySet().stream().filter(entry -> entry.getKey().isApache())
                .map(Map.Entry::getValue).toList();
            if (sluice != null && !apache.isEmpty()) {
                out.append(String.format(Locale.ROOT,
                    "| %s | **Sluice ÷ better Apache** | | | %s | %s | %s | %s | %s | %s | %s | %s | |%n", workload.id(),
                    ratio(sluice.start, apache, medians -> medians.start, false),
                    ratio(sluice.recordsPerSecond, apache, medians -> medians.recordsPerSecond, true),
                    ratio(sluice.cpuPerRecord, apache, medians -> medians.cpuPerRecord, false),
                    ratio(sluice.peakRss, apache, medians -> medians.peakRss, false),
                    ratio(sluice.heap, apache, medians -> medians.heap, false),
                    ratio(sluice.p50, apache, medians -> medians.p50, false),
                    ratio(sluice.p99, apache, medians -> medians.p99, false),
                    ratio(sluice.max, apache, medians -> medians.max, false)));
            }
        }
        final String summary = out.toString();
        try {
            Files.createDirectories(file.getParent());
            Files.writeString(file, summary);
        } catch (final IOException e) {
            throw new UncheckedIOException(e);
        }
        return summary;
    }

    private static String ratio(final double sluice, final List<Medians> apache, final ToDoubleFunction<Medians> figure,
                                final boolean higherIsBetter) {
        final double[] figures = apache.stream().mapToDouble(figure).filter(value -> !Double.isNaN(value)).toArray();
        if (Double.isNaN(sluice) || figures.length == 0) {
            return "–";
        }
        final double better = higherIsBetter ? Arrays.stream(figures).max().getAsDouble() : Arrays.stream(figures).min().getAsDouble();
        return String.format(Locale.ROOT, "%.2f×", sluice / better);
    }

    /** The medians of one workload's runs on one runtime, over its right runs only. */
    private static final class Medians {
        final int right;
        final int all;
        final double wall;
        final double start;
        final double recordsPerSecond;
        final double cpuPerRecord;
        final double peakRss;
        final double heap;
        final double p50;
        final double p99;
        final double max;
        final String threads;

        Medians(final List<RunResult> runs) {
            final List<RunResult> timed = runs.stream().filter(run -> run.right() && !run.paced()).toList();
            final List<RunResult> paced = runs.stream().filter(run -> run.right() && run.paced()).toList();
            this.all = runs.size();
            this.right = timed.size() + paced.size();
            this.wall = median(timed, RunResult::wallSeconds);
            this.start = median(timed, RunResult::startSeconds);
            this.recordsPerSecond = median(timed, RunResult::recordsPerSecond);
            this.cpuPerRecord = median(timed, RunResult::cpuMicrosPerRecord);
            this.peakRss = median(timed, RunResult::peakRssMegabytes);
            this.heap = median(timed, RunResult::heapMegabytes);
            this.p50 = median(paced, run -> run.latencyMillis(0.5));
            this.p99 = median(paced, run -> run.latencyMillis(0.99));
            this.max = median(paced, run -> run.latencyMillis(1.0));
            this.threads = timed.stream().sorted((a, b) -> Double.compare(a.wallSeconds(), b.wallSeconds()))
                .skip(timed.size() / 2).findFirst().map(run -> threadGroups(run, 5)).orElse("");
        }

        String row(final Workload workload, final Variant variant) {
            return String.format(Locale.ROOT, "| %s | %s | %d of %d | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |%n",
                workload.id(), variant.description(), right, all, number(wall, "%.1f"), number(start, "%.1f"),
                number(recordsPerSecond, "%,.0f"),
                number(cpuPerRecord, "%.1f"), number(peakRss, "%.0f"), number(heap, "%.0f"), number(p50, "%.0f"), number(p99, "%.0f"),
                number(max, "%.0f"), threads);
        }

        private static String number(final double value, final String format) {
            return Double.isNaN(value) ? "–" : String.format(Locale.ROOT, format, value);
        }

        private static double median(final List<RunResult> runs, final ToDoubleFunction<RunResult> figure) {
            final double[] values = runs.stream().mapToDouble(figure).sorted().toArray();
            if (values.length == 0) {
                return Double.NaN;
            }
            final int middle = values.length / 2;
            return values.length % 2 == 1 ? values[middle] : (values[middle - 1] + values[middle]) / 2;
        }
    }
}
