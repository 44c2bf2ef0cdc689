package dev.sluice.streams.runtime.internals;

import org.apache.kafka.streams.processor.TaskId;

/** What {@link EngineRuntime} tells the application instance about its engine threads and tasks. */
public interface RuntimeListener {

    /** An engine thread is about to stop because of {@code error} (for the uncaught exception handler). */
    void onThreadFailure(String threadName, Throwable error);

    /** A task finished restoring and runs on this instance. */
    default void onTaskRunning(TaskId task) {
    }

    /**
     * A rebalance began on an engine thread, one got its assignment, or one now runs every task it was
     * assigned: {@link EngineRuntime#rebalanceStatus()} may have changed. Called on the engine thread; must
     * return quickly.
     */
    default void onRebalanceStatusChanged() {
    }
}
