package dev.sluice.bench.apps;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Map;
import org.junit.jupiter.api.Test;

class FinalValuesTest {

    @Test
    void completeOnlyWhenEveryKeyHoldsItsFinalValueAndNoOtherKeyAppeared() {
        final FinalValues values = new FinalValues(Map.of("a", "2", "b", "1"));
        values.accept("a", "1");
        values.accept("b", "1");
        assertFalse(values.complete());
        values.accept("a", "2");
        assertTrue(values.complete());
        values.accept("a", "3");
        assertFalse(values.complete(), "a key that moves past its final value");
        values.accept("a", "2");
        assertTrue(values.complete());
        values.accept("c", "1");
        assertFalse(values.complete(), "a key that should not be there");
        values.accept("c", "2");
        assertFalse(values.complete());
        assertTrue(values.differences().contains("1 unexpected keys"), values.differences());
    }

    @Test
    void aNullValueIsAValueOfItsOwn() {
        final FinalValues values = new FinalValues(Map.of("a", "1"));
        values.accept("a", null);
        assertFalse(values.complete());
        values.accept("a", "1");
        assertTrue(values.complete());
    }
}
