package dev.sluice.compat.faults;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import org.apache.kafka.common.utils.Utils;

/** A scenario's working directory, emptied of what an earlier run of it left. */
final class RunDirectories {

    private RunDirectories() {
    }

    static Path fresh(final Path directory) {
        try {
            Utils.delete(directory.toFile());
        } catch (final IOException e) {
            throw new UncheckedIOException(e);
        }
        return directory;
    }
}
