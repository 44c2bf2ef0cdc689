package dev.sluice.streams.runtime.internals;

import dev.sluice.streams.state.internals.StoreDirectoryCorruptedException;
import java.util.Optional;
import java.util.Set;
import org.apache.kafka.streams.errors.TaskCorruptedException;
import org.apache.kafka.streams.processor.TaskId;

/**
 * Whether a failure reports a task's local state corrupted: not the thread's failure, since the runtime
 * wipes what it cannot trust and restores it, as Kafka Streams does.
 */
public final class TaskCorruption {

    private TaskCorruption() {
    }

    /** The corruption {@code error} reports, as a TaskCorruptedException of {@code task}; empty when it reports none. */
    public static Optional<TaskCorruptedException> of(final Throwable error, final TaskId task) {
        for (Throwable cause = error; cause != null; cause = cause.getCause()) {
            if (cause instanceof TaskCorruptedException) {
                return Optional.of((TaskCorruptedException) cause);
            }
            if (cause instanceof StoreDirectoryCorruptedException) {
                return Optional.of(new TaskCorruptedException(Set.of(task), (StoreDirectoryCorruptedException) cause));
            }
        }
        return Optional.empty();
    }
}
