package dev.sluice.streams.runtime.internals;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.apache.kafka.common.config.ConfigException;
import org.junit.jupiter.api.Test;

class RuntimeChoiceTest {

    @Test
    void withNoChoiceTheNativeLibraryDecides() {
        assertFalse(RuntimeChoice.apacheRuntime(null, true));
        assertTrue(RuntimeChoice.apacheRuntime(null, false));
        assertTrue(RuntimeChoice.apacheRuntime(" ", false));
    }

    @Test
    void anExplicitChoiceHoldsWhateverThePlatform() {
        assertTrue(RuntimeChoice.apacheRuntime("apache", true));
        assertTrue(RuntimeChoice.apacheRuntime("Apache", false));
        assertFalse(RuntimeChoice.apacheRuntime("sluice", true));
        // Sluice's runtime demanded where there is no library: the library's load names what is missing.
        assertFalse(RuntimeChoice.apacheRuntime("SLUICE", false));
    }

    @Test
    void anyOtherChoiceIsAConfigurationError() {
        final ConfigException error = assertThrows(ConfigException.class, () -> RuntimeChoice.apacheRuntime("kafka", true));
        assertTrue(error.getMessage().contains("sluice.runtime") && error.getMessage().contains("sluice or apache"),
            error.getMessage());
    }
}
