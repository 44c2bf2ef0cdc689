package org.apache.kafka.streams;

import dev.sluice.streams.runtime.ApplicationShutdownRequestedException;
import dev.sluice.streams.runtime.internals.EngineRuntime;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.streams.KafkaStreams.State;
import org.apache.kafka.streams.errors.StreamsException;
import org.apache.kafka.streams.errors.StreamsUncaughtExceptionHandler.StreamThreadExceptionResponse;
import org.apache.kafka.streams.processor.TaskId;
import org.slf4j.Logger;

/**
 * The thread that keeps a {@link KafkaStreams} client's side of Kafka Streams' contract while the engine
 * runs: it hands engine threads that failed to the uncaught exception handler once they have stopped and
 * applies its answer, and follows the engine threads' rebalances to move the client between REBALANCING
 * and RUNNING. The engine's callbacks wake it; it also looks on its own every interval, for a thread that
 * stopped without a Java exception.
 */
final class ClientSupervisor {

    /** What the supervisor asks of the client it supervises. */
    interface Client {
        State state();

        /** Moves to {@code state} if Kafka Streams would. */
        void transitionTo(State state);

        /** The client's current engine. */
        EngineRuntime engine();

        /** Closes the client to ERROR, on a thread of its own. */
        void closeToError();

        /** The user's uncaught exception handler's answer. */
        StreamThreadExceptionResponse handle(Throwable failure);

        /** Asks every instance of the application to shut down, through the group. */
        void requestApplicationShutdown();

        /** The tasks of the engine are {@code local} now: the client forgets the others' threads. */
        void retainTasks(Set<TaskId> local);

        /** Starts one more engine thread in {@code engine}, as the client adds a stream thread; returns its name. */
        String addThread(EngineRuntime engine);
    }

    private static final long INTERVAL_MS = 100;

    private final Client client;
    private final Logger log;
    /**
     * What each failed engine thread's task threw, by thread name, reported before the thread stops;
     * handed to the uncaught exception handler once the thread has stopped.
     */
    private final Map<String, Throwable> threadFailures = new ConcurrentHashMap<>();
    /** Wakes the supervisor before its interval ends: a thread failed, or the engine's rebalances moved on. */
    private final Semaphore wakeUps = new Semaphore(0);
    /** Rebalances the current engine's threads had begun when the supervisor last looked; its own. */
    private long rebalancesSeen;

    ClientSupervisor(final Client client, final Logger log) {
        this.client = client;
        this.log = log;
    }

    /** Starts supervising on a daemon thread named {@code threadName}; it ends once the client shuts down. */
    void start(final String threadName) {
        final Thread thread = new Thread(this::supervise, threadName);
        thread.setDaemon(true);
        thread.start();
    }

    /** The engine thread {@code threadName} failed with {@code error}; false when it had failed already. */
    boolean threadFailed(final String threadName, final Throwable error) {
        final boolean first = threadFailures.putIfAbsent(threadName, error) == null;
        wakeUp();
        return first;
    }

    /**
     * The engine could not start, for a reason Kafka Streams' threads meet only once running: the
     * uncaught exception handler gets {@code failure}; there is no thread to replace.
     */
    void engineFailedToStart(final Throwable failure) {
        log.error("The engine could not start", failure);
        handleThreadFailure(failure, Optional.empty());
    }

    /** Makes the supervisor look now. */
    void wakeUp() {
        wakeUps.release();
    }

    private void supervise() {
        try {
            while (!client.state().hasStartedOrFinishedShuttingDown()) {
                wakeUps.tryAcquire(INTERVAL_MS, TimeUnit.MILLISECONDS);
                wakeUps.drainPermits();
                final EngineRuntime current = client.engine();
                // In this order: a stream thread that stops between the two looks is found by the second.
                final boolean failed = current.hasFailed();
                final Optional<String> stopped = current.stoppedThread();
                if (stopped.isPresent()) {
                    handleStoppedThread(current, stopped.get());
                } else if (failed) {
                    // Not a stream thread but the engine's global thread, which is never replaced: the
                    // handler gets what its global state threw, else the error the engine stopped with.
                    final Throwable engineError = closeFailedEngine(current);
                    final Throwable thrownByGlobalState = threadFailures.remove(current.globalThreadName());
                    handleThreadFailure(thrownByGlobalState != null ? thrownByGlobalState : engineError, Optional.empty());
                } else {
                    current.reapRetiredThreads();
                    current.refreshPatternSubscription();
                    followRebalances(current);
                }
            }
        } catch (final InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (final RuntimeException e) {
            log.error("The supervisor of the engine failed", e);
            client.closeToError();
        }
    }

    private static Throwable closeFailedEngine(final EngineRuntime failed) {
        try {
            failed.close();
            return new StreamsException("An engine thread stopped");
        } catch (final RuntimeException error) {
            return error;
        }
    }

    /**
     * Kafka Streams' client follows its stream threads: REBALANCING while one is in a rebalance, RUNNING
     * once every one has its assignment and runs all its tasks (also when it was assigned none). A
     * rebalance that began and ended between two looks still shows as REBALANCING, then RUNNING, as Kafka
     * Streams would have shown it.
     */
    private void followRebalances(final EngineRuntime current) {
        client.retainTasks(current.localTasks().keySet());
        final EngineRuntime.RebalanceStatus status = current.rebalanceStatus();
        final boolean rebalanced = status.rebalancesStarted() != rebalancesSeen;
        rebalancesSeen = status.rebalancesStarted();
        if (client.state() == State.RUNNING && (rebalanced || !status.allAssignedTasksRunning())) {
            client.transitionTo(State.REBALANCING);
        }
        if (client.state() == State.REBALANCING && status.allAssignedTasksRunning()) {
            client.transitionTo(State.RUNNING);
        }
    }

    /**
     * Takes the stopped thread out of the engine and hands what it failed with to the uncaught exception
     * handler: the exception its task threw when there is one, else the engine's error.
     */
    private void handleStoppedThread(final EngineRuntime current, final String thread) {
        Throwable failure;
        try {
            current.takeStoppedThread(thread);
            failure = new StreamsException("Stream thread " + thread + " stopped");
        } catch (final RuntimeException engineError) {
            failure = engineError;
        }
        final Throwable thrownByTask = threadFailures.remove(thread);
        if (thrownByTask instanceof ApplicationShutdownRequestedException) {
            log.warn("Detected that shutdown was requested. All clients in this app will now begin to shutdown");
            client.closeToError();
            return;
        }
        handleThreadFailure(thrownByTask != null ? thrownByTask : failure, Optional.of(current));
    }

    /**
     * Applies the uncaught exception handler's answer to {@code failure}; {@code replaceIn} is the engine
     * whose failed stream thread a replacement would take over from, empty when there is nothing to replace.
     */
    private void handleThreadFailure(final Throwable failure, final Optional<EngineRuntime> replaceIn) {
        StreamThreadExceptionResponse response;
        try {
            response = client.handle(failure);
        } catch (final RuntimeException handlerError) {
            log.error("The uncaught exception handler threw; shutting the client down", handlerError);
            response = StreamThreadExceptionResponse.SHUTDOWN_CLIENT;
        }
        if (response == StreamThreadExceptionResponse.REPLACE_THREAD && failure instanceof Error) {
            log.error("The uncaught exception handler chose REPLACE_THREAD for an Error; the JVM is not in a "
                + "well-defined state, so the client shuts down instead", failure);
            response = StreamThreadExceptionResponse.SHUTDOWN_CLIENT;
        }
        if (response == StreamThreadExceptionResponse.REPLACE_THREAD && replaceIn.isEmpty()) {
            log.error("The uncaught exception handler chose REPLACE_THREAD for a failure no stream thread "
                + "replacement mends (of the global thread, or of the engine's start); the client shuts down instead",
                failure);
            response = StreamThreadExceptionResponse.SHUTDOWN_CLIENT;
        }
        switch (response) {
            case REPLACE_THREAD:
                log.error("Replacing the failed thread as the uncaught exception handler chose", failure);
                replaceThread(replaceIn.get());
                break;
            case SHUTDOWN_APPLICATION:
                log.error("Encountered the following exception during processing and the registered exception handler "
                    + "opted to {}. The streams client is going to shut down now.", response, failure);
                // The request goes through the group, which hands it back to every client, this one included: each
                // shuts down as its engine threads hear it (ApplicationShutdownRequestedException).
                try {
                    client.requestApplicationShutdown();
                } catch (final StreamsException e) {
                    log.error("Could not ask the other instances to shut down; this one shuts down", e);
                    client.closeToError();
                }
                break;
            case SHUTDOWN_CLIENT:
            default:
                log.error("Encountered the following exception during processing and the registered exception handler "
                    + "opted to {}. The streams client is going to shut down now.", response, failure);
                client.closeToError();
                break;
        }
    }

    /** Starts a thread in place of the failed one, which took its tasks out dirty; the others run on. */
    private void replaceThread(final EngineRuntime current) {
        try {
            log.info("Started stream thread {} in place of the failed one", client.addThread(current));
        } catch (final RuntimeException e) {
            log.error("The replacement thread could not start; shutting the client down", e);
            client.closeToError();
        }
    }
}
