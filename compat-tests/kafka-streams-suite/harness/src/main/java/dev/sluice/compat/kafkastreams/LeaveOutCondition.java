package dev.sluice.compat.kafkastreams;

import java.util.Optional;
import java.util.regex.Pattern;
import org.junit.jupiter.api.extension.ConditionEvaluationResult;
import org.junit.jupiter.api.extension.ExecutionCondition;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * Leaves out the parameterized invocations a suite does not run, by their display name: JUnit reports
 * them as skipped, with the reason, so the report counts them. {@link SuiteMain} turns this condition
 * on (through JUnit's extension auto-detection) only when the suite gives the {@value #PROPERTY} system
 * property, a regular expression; the display name of a parameterized invocation shows its arguments.
 */
public final class LeaveOutCondition implements ExecutionCondition {

    static final String PROPERTY = "sluice.compat.leaveOut";
    static final String REASON = "left out by the suite: ";

    @Override
    public ConditionEvaluationResult evaluateExecutionCondition(final ExtensionContext context) {
        final Optional<String> pattern = Optional.ofNullable(System.getProperty(PROPERTY));
        if (pattern.isPresent() && context.getTestMethod().isPresent()
            && Pattern.compile(pattern.get()).matcher(context.getDisplayName()).find()) {
            return ConditionEvaluationResult.disabled(REASON + pattern.get());
        }
        return ConditionEvaluationResult.enabled("");
    }
}
