package dev.sluice.streams.runtime.internals;

import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import org.apache.kafka.streams.processor.TaskId;

/**
 * Where each engine thread stands in its rebalances, as Kafka Streams' stream thread states tell it: a
 * rebalance began (PARTITIONS_REVOKED), the thread has its assignment and tasks of it still restore
 * (PARTITIONS_ASSIGNED), or every task it was assigned has run (RUNNING, until its next rebalance: a task
 * restoring again later, revived after a corrupt store, does not take the thread back). A thread that has
 * not had its first assignment yet counts as in a rebalance. A thread added while the client runs is
 * STARTING until it reports. Threads come and go as they are added, removed or replaced. Thread-safe.
 */
final class EngineThreadAssignments {

    private int threadCount;
    /** Assigned tasks not running yet, of each thread that has its assignment and is not running. */
    private final Map<String, Set<TaskId>> restoring = new HashMap<>();
    private final Set<String> running = new HashSet<>();
    /** Every thread that reported a rebalance, in a rebalance since its last one began. */
    private final Set<String> rebalancing = new HashSet<>();
    /** Threads added while the client runs that have not reported yet. */
    private final Set<String> starting = new HashSet<>();
    /** Threads whose next assignment is a step in a rebalance that goes on at once. */
    private final Set<String> followUpDue = new HashSet<>();
    private long rebalancesStarted;

    EngineThreadAssignments(final int threadCount) {
        this.threadCount = threadCount;
    }

    synchronized int threadCount() {
        return threadCount;
    }

    /** One more engine thread runs, {@code thread}; it is STARTING until it reports a rebalance. */
    synchronized void threadAdded(final String thread) {
        threadCount++;
        starting.add(thread);
    }

    /** A thread that was to stop did not: it counts again. */
    synchronized void threadKept() {
        threadCount++;
    }

    /** A thread was asked to stop: it no longer counts, though it may go on reporting until it has ended. */
    synchronized void threadStopping() {
        threadCount--;
    }

    /** {@code thread} has ended: what it reported goes. */
    synchronized void threadGone(final String thread) {
        starting.remove(thread);
        restoring.remove(thread);
        running.remove(thread);
        rebalancing.remove(thread);
        followUpDue.remove(thread);
    }

    /** A rebalance began on {@code thread}. */
    synchronized void started(final String thread) {
        starting.remove(thread);
        restoring.remove(thread);
        running.remove(thread);
        rebalancing.add(thread);
        rebalancesStarted++;
    }

    /**
     * The next assignment of {@code thread} leads straight to a follow-up rebalance (its member gave tasks up that
     * go elsewhere in the follow-up, or was asked to rejoin at once): the thread stays in its rebalance. Kafka
     * Streams' thread, whose poll joins again before the thread gets to RUNNING, is seen RUNNING in between only
     * when the follow-up is slow; a client that reported RUNNING here would run a part of its tasks, and queries
     * and lags would find the rest missing.
     */
    synchronized void followUpDue(final String thread) {
        followUpDue.add(thread);
    }

    /**
     * {@code thread} owns {@code tasks} now, of which {@code alreadyRunning} (or more) run. A rebalance that took
     * nothing from the thread began and ended with this assignment: it counts, as a Kafka Streams thread passes
     * through PARTITIONS_ASSIGNED after every rebalance.
     */
    synchronized void assigned(final String thread, final Set<TaskId> tasks, final Set<TaskId> alreadyRunning) {
        starting.remove(thread);
        if (followUpDue.remove(thread)) {
            restoring.remove(thread);
            running.remove(thread);
            if (rebalancing.add(thread)) {
                rebalancesStarted++;
            }
            return;
        }
        if (!rebalancing.remove(thread)) {
            rebalancesStarted++;
        }
        final Set<TaskId> waiting = new HashSet<>(tasks);
        waiting.removeAll(alreadyRunning);
        if (waiting.isEmpty()) {
            restoring.remove(thread);
            running.add(thread);
        } else {
            restoring.put(thread, waiting);
            running.remove(thread);
        }
    }

    /** {@code task} of {@code thread} runs; returns true when that made the thread RUNNING. */
    synchronized boolean taskRunning(final String thread, final TaskId task) {
        final Set<TaskId> waiting = restoring.get(thread);
        if (waiting == null || !waiting.remove(task) || !waiting.isEmpty()) {
            return false;
        }
        restoring.remove(thread);
        running.add(thread);
        return true;
    }

    /** The tasks assigned to the threads that do not run yet: restoring, or held unopened while processing is paused. */
    synchronized Set<TaskId> waitingTasks() {
        final Set<TaskId> waiting = new HashSet<>();
        restoring.values().forEach(waiting::addAll);
        return waiting;
    }

    /**
     * The state of each thread that was added or has reported a rebalance, as Kafka Streams names stream
     * thread states: STARTING before it reports, PARTITIONS_REVOKED in a rebalance, PARTITIONS_ASSIGNED
     * while tasks of its assignment restore, RUNNING once every one runs.
     */
    synchronized Map<String, String> threadStates() {
        final Map<String, String> states = new HashMap<>();
        starting.forEach(thread -> states.put(thread, "STARTING"));
        rebalancing.forEach(thread -> states.put(thread, "PARTITIONS_REVOKED"));
        restoring.keySet().forEach(thread -> states.put(thread, "PARTITIONS_ASSIGNED"));
        running.forEach(thread -> states.put(thread, "RUNNING"));
        return states;
    }

    /** The state of {@code thread} as {@link #threadStates()} names it; STARTING before its first rebalance. */
    synchronized String threadState(final String thread) {
        return threadStates().getOrDefault(thread, "STARTING");
    }

    synchronized EngineRuntime.RebalanceStatus status() {
        return new EngineRuntime.RebalanceStatus(rebalancesStarted, running.size() == threadCount);
    }
}
