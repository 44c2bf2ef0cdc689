package dev.sluice.streams.state.internals;

import org.apache.kafka.streams.errors.ProcessorStateException;

/**
 * A store directory holds something that is not an intact Sluice store (foreign files, another
 * program's database, truncated or damaged files). Its contents cannot be trusted: the directory is
 * to be wiped and the store restored from its changelog. Raised by the native library.
 */
public class StoreDirectoryCorruptedException extends ProcessorStateException {

    private static final long serialVersionUID = 1L;

    public StoreDirectoryCorruptedException(final String message) {
        super(message);
    }
}
