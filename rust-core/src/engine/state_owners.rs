//! Which engine thread holds the state of each task of the instance.
//!
//! A task's state directory is one thread's at a time (Kafka Streams' `StateDirectory` locks
//! it for the thread that opens it). Kafka Streams' assignor hands an instance's threads
//! their tasks one member at a time, so a task can move between two threads of the instance
//! within one rebalance (a standby replica promoted on another thread, an active task moved
//! away while the instance keeps a replica of it on another thread): the thread that gets it
//! waits until the thread that had it closed its copy, as Kafka Streams' threads retry a task
//! whose directory is still locked.

use std::collections::BTreeMap;
use std::sync::Mutex;

use crate::engine::topology::TaskId;

/// Task → the index of the thread that holds its state.
#[derive(Default)]
pub(crate) struct StateOwners(Mutex<BTreeMap<TaskId, usize>>);

impl StateOwners {
    /// Takes the state of `task` for `thread`: true when it is that thread's now (or was),
    /// false while another thread holds it.
    pub fn claim(&self, task: TaskId, thread: usize) -> bool {
        *self.owners().entry(task).or_insert(thread) == thread
    }

    /// Gives the state of `task` up, if `thread` holds it.
    pub fn release(&self, task: TaskId, thread: usize) {
        let mut owners = self.owners();
        if owners.get(&task) == Some(&thread) {
            owners.remove(&task);
        }
    }

    fn owners(&self) -> std::sync::MutexGuard<'_, BTreeMap<TaskId, usize>> {
        self.0
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TASK: TaskId = TaskId {
        subtopology: 0,
        partition: 1,
    };

    #[test]
    fn a_task_s_state_is_one_thread_s_until_that_thread_releases_it() {
        let owners = StateOwners::default();
        assert!(owners.claim(TASK, 1));
        assert!(owners.claim(TASK, 1), "claiming again keeps it");
        assert!(!owners.claim(TASK, 2), "another thread waits");
        owners.release(TASK, 2);
        assert!(!owners.claim(TASK, 2), "only the holder releases it");
        owners.release(TASK, 1);
        assert!(owners.claim(TASK, 2));
    }
}
