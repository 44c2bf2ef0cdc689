package dev.sluice.streams.runtime;

import org.apache.kafka.streams.errors.StreamsException;

/**
 * Stops an engine thread that found, as it got its assignment, that another instance asked the whole
 * application to shut down ({@code SHUTDOWN_APPLICATION}): the client shuts down to ERROR without asking
 * its uncaught exception handler, as Kafka Streams' clients do when their assignment says so.
 */
public final class ApplicationShutdownRequestedException extends StreamsException {

    private static final long serialVersionUID = 1L;

    public ApplicationShutdownRequestedException(final String message) {
        super(message);
    }
}
