//! A wake-up for a thread that serves librdkafka queues without waiting inside librdkafka:
//! rdkafka's waiting polls round the time left down to whole milliseconds and then spin
//! through the rest of a millisecond reading the clock, so a thread that waits often (after
//! every event) burns CPU for nothing. Such a thread takes what is queued with zero timeouts
//! and sleeps here in between; librdkafka signals when a queue goes from empty to not empty.

use std::sync::{Condvar, Mutex, PoisonError};
use std::time::Duration;

/// Set when an event arrives on a queue that was empty.
#[derive(Default)]
pub(crate) struct QueueSignal {
    pending: Mutex<bool>,
    ready: Condvar,
}

impl QueueSignal {
    /// Called on one of librdkafka's threads; never panics.
    pub(crate) fn notify(&self) {
        *self.pending.lock().unwrap_or_else(PoisonError::into_inner) = true;
        self.ready.notify_one();
    }

    /// Returns once an event was signalled (now or since the last wait), after `timeout`, or
    /// spuriously earlier; clears the signal. The caller then empties its queues, or they
    /// signal no more.
    pub(crate) fn wait(&self, timeout: Duration) {
        let mut pending = self.pending.lock().unwrap_or_else(PoisonError::into_inner);
        if !*pending {
            pending = self
                .ready
                .wait_timeout(pending, timeout)
                .unwrap_or_else(PoisonError::into_inner)
                .0;
        }
        *pending = false;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::thread;
    use std::time::Instant;

    #[test]
    fn a_signal_given_before_the_wait_is_not_lost() {
        let signal = QueueSignal::default();
        signal.notify();
        let started = Instant::now();
        signal.wait(Duration::from_secs(10));
        assert!(started.elapsed() < Duration::from_secs(5));
    }

    #[test]
    fn a_signal_from_another_thread_wakes_the_waiter() {
        let signal = Arc::new(QueueSignal::default());
        let notifier = Arc::clone(&signal);
        let started = Instant::now();
        let handle = thread::spawn(move || {
            thread::sleep(Duration::from_millis(20));
            notifier.notify();
        });
        signal.wait(Duration::from_secs(10));
        handle.join().unwrap();
        assert!(started.elapsed() < Duration::from_secs(5));
    }
}
