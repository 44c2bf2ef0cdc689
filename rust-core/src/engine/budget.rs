//! The uncommitted-bytes budget (`statestore.uncommitted.max.bytes`) is the instance's: each
//! stream thread, and the global thread when there is one, keeps to an equal share of it, as
//! in Kafka Streams. The shares follow the stream threads as they are added and removed.

use std::sync::atomic::{AtomicUsize, Ordering};

/// The instance's uncommitted-bytes budget and how many threads share it.
pub(crate) struct UncommittedBytesBudget {
    /// The instance's bound; `None` for no bound.
    max: Option<u64>,
    /// Holders besides the stream threads: the global thread, when there is one.
    global_holders: usize,
    stream_threads: AtomicUsize,
}

impl UncommittedBytesBudget {
    /// The budget `max` (`None`: no bound), shared by no stream thread yet and by the global
    /// thread when `global_thread`.
    pub fn new(max: Option<u64>, global_thread: bool) -> Self {
        UncommittedBytesBudget {
            max,
            global_holders: usize::from(global_thread),
            stream_threads: AtomicUsize::new(0),
        }
    }

    /// Shares the budget between `stream_threads` stream threads (and the global thread).
    pub fn share_between(&self, stream_threads: usize) {
        self.stream_threads.store(stream_threads, Ordering::Relaxed);
    }

    /// What one thread may hold uncommitted before it commits early; `None`: no bound.
    pub fn share(&self) -> Option<u64> {
        let holders = self.stream_threads.load(Ordering::Relaxed) + self.global_holders;
        self.max.map(|max| max / holders.max(1) as u64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shares_follow_the_stream_threads_and_count_the_global_thread() {
        let budget = UncommittedBytesBudget::new(Some(1200), true);
        assert_eq!(budget.share(), Some(1200), "the global thread alone");
        budget.share_between(2);
        assert_eq!(budget.share(), Some(400));
        budget.share_between(3);
        assert_eq!(budget.share(), Some(300));
        budget.share_between(1);
        assert_eq!(budget.share(), Some(600));

        let streams_only = UncommittedBytesBudget::new(Some(1200), false);
        streams_only.share_between(4);
        assert_eq!(streams_only.share(), Some(300));
        streams_only.share_between(0);
        assert_eq!(
            streams_only.share(),
            Some(1200),
            "no holder keeps the whole budget"
        );
    }

    #[test]
    fn no_bound_stays_no_bound() {
        let budget = UncommittedBytesBudget::new(None, false);
        budget.share_between(3);
        assert_eq!(budget.share(), None);
    }
}
