package dev.sluice.compat.faults;

import dev.sluice.compat.childjvm.ChildJvm;
import dev.sluice.compat.faults.ChildOutput.Restore;
import dev.sluice.compat.faults.Verifier.Verification;
import dev.sluice.streams.testing.broker.LocalKafkaBroker;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ExecutionException;
import java.util.function.Function;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;

/**
 * Lives of the application on one state directory with the application stopped between them:
 * the first (on the writer's runtime; two when the damage needs them) process input and stop cleanly;
 * then, optionally, one store's directory is damaged; the last (on the reader's runtime, which may be
 * the other one) processes as much input again. The verifier then compares the committed output with the committed input.
 */
final class StateRun {

    /** The store that is damaged: task 0_0's running minimum. */
    static final String DAMAGED_STORE = "min-store";
    static final String DAMAGED_TASK = "0_0";
    /** The damaged task's stores, by store and changelog partition. */
    static final List<String> DAMAGED_TASK_STORES = List.of("min-store-0", "sum-store-0");

    private static final Duration RUNNING_TIMEOUT = Duration.ofSeconds(60);
    private static final Duration CATCH_UP_TIMEOUT = Duration.ofSeconds(90);
    private static final Duration GROUP_EXPIRY_TIMEOUT = Duration.ofSeconds(60);
    private static final int KEYS = 20;
    private static final int PARTITIONS = 3;

    private final LocalKafkaBroker broker;
    private final int recordsPerLife;
    private final Path workDir;

    StateRun(final LocalKafkaBroker broker, final int recordsPerLife, final Path workDir) {
        this.broker = broker;
        this.recordsPerLife = recordsPerLife;
        this.workDir = workDir;
    }

    StateRunResult run(final String name, final Target writer, final Target reader, final Optional<StateDamage> damage)
        throws InterruptedException {
        final Topics topics = new Topics(name);
        final Path runDir = RunDirectories.fresh(workDir.resolve(name));
        final Path stateDir = runDir.resolve("state");
        broker.createTopic(topics.input(), PARTITIONS);
        topics.outputs().forEach(topic -> broker.createTopic(topic, PARTITIONS));
        final Function<Target, List<String>> appArguments = target -> List.of(broker.bootstrapServers(), target.name(),
            topics.prefix(), stateDir.toString(), "exactly_once_v2", "instance");

        final int livesBefore = damage.map(StateDamage::livesBefore).orElse(1);
        produce(topics, 0);
        for (int life = 0; life < livesBefore; life++) {
            final ChildJvm before = AggregationApp.launch(writer, runDir.resolve("life-" + life + ".log"), appArguments.apply(writer));
            try {
                if (!before.awaitOutput(ChildOutput::reachedRunning, RUNNING_TIMEOUT)) {
                    throw new AssertionError("a life before the damage did not reach RUNNING; see " + before.log());
                }
                final Verification caughtUp = new Verifier(broker.bootstrapServers(), topics).awaitAndVerify(CATCH_UP_TIMEOUT);
                if (!caughtUp.mismatches().isEmpty()) {
                    throw new AssertionError("a life before the damage already mismatches: " + caughtUp.mismatches());
                }
            } finally {
                before.stop();
            }
        }
        if (writer != reader) {
            // The stopped instance stays a static member of the group until its session times out, and a
            // member of the other runtime cannot join beside it: Kafka Streams' consumers speak its
            // assignor's protocol, Sluice's the range assignor's.
            awaitEmptyGroup(topics.applicationId());
        }

        damage.ifPresent(kind -> kind.apply(stateDir.resolve(topics.applicationId()).resolve(DAMAGED_TASK).resolve("rocksdb").resolve(DAMAGED_STORE)));
        produce(topics, 1);

        final long started = System.nanoTime();
        final ChildJvm second = AggregationApp.launch(reader, runDir.resolve("life-" + livesBefore + ".log"), appArguments.apply(reader));
        try {
            if (!second.awaitOutput(ChildOutput::reachedRunning, RUNNING_TIMEOUT)) {
                return StateRunResult.didNotRun(name, reader, second.isAlive() ? "not RUNNING after " + RUNNING_TIMEOUT.toSeconds() + " s"
                    : "exited with " + second.exitValue() + ": " + ChildOutput.firstError(second.lines()), second.log());
            }
            final Duration toRunning = Duration.ofNanos(System.nanoTime() - started);
            final Verification verification = new Verifier(broker.bootstrapServers(), topics).awaitAndVerify(CATCH_UP_TIMEOUT);
            final boolean stayedUp = second.isAlive() && !ChildOutput.reachedError(second.lines());
            final List<Restore> restores = ChildOutput.restores(second.lines());
            return new StateRunResult(name, reader, Optional.of(verification), restores, toRunning,
                stayedUp ? Optional.empty() : Optional.of("failed after RUNNING: " + ChildOutput.firstError(second.lines())), second.log());
        } finally {
            second.stop();
        }
    }

    private void awaitEmptyGroup(final String groupId) throws InterruptedException {
        final long deadline = System.nanoTime() + GROUP_EXPIRY_TIMEOUT.toNanos();
        try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrapServers()))) {
            while (!admin.describeConsumerGroups(List.of(groupId)).all().get().get(groupId).members().isEmpty()) {
                if (System.nanoTime() > deadline) {
                    throw new AssertionError("group " + groupId + " still has members " + GROUP_EXPIRY_TIMEOUT.toSeconds() + " s after the application stopped");
                }
                Thread.sleep(500);
            }
        } catch (final ExecutionException e) {
            throw new AssertionError("could not describe group " + groupId, e);
        }
    }

    private void produce(final Topics topics, final long seed) {
        new InputDriver(broker.bootstrapServers(), topics.input(), KEYS, recordsPerLife, Duration.ofSeconds(1), seed).run();
    }
}
