package dev.sluice.streams.runtime.internals;

/** Creates the runner of each task the engine assigns to one of its threads; called on that thread. */
public interface TaskFactory {

    /**
     * A task was assigned to the calling engine thread.
     *
     * @param inputs framed inputs ({@link RuntimeFraming#readInputs}): the task's source and repartition
     *     partitions with the group's committed offset and metadata
     */
    TaskRunner create(int subtopology, int partition, byte[] inputs);
}
